import { describe, expect, it } from 'vitest';
import { CtxsimError } from '../src/errors.js';
import { parseResultsJson, picoFromUsd, resultsJson, SCHEMA_VERSION, type ResultsMeta } from '../src/records/json.js';
import { goldenRun } from './fixtures/report/run.js';

const { results, info } = await goldenRun();
const meta: ResultsMeta = { tool: 'ctxsim', version: '0.1.0', priceTable: '2026-01-01', generatedAt: '2026-01-02T03:04:05.000Z' };
const text = resultsJson(results, info, meta);

describe('results.json', () => {
  it('holds schemaVersion, meta, the resolved study and every record', () => {
    const doc = JSON.parse(text);
    expect(Object.keys(doc)).toEqual(['schemaVersion', 'meta', 'money', 'study', 'policies', 'summary', 'turns', 'probes', 'violations']);
    expect(doc.schemaVersion).toBe(SCHEMA_VERSION);
    expect(doc.meta).toEqual(meta);
    expect(doc.study.model).toBe('gpt-4o-mini');
    expect(doc.study.encoding).toBe('chars4');
    expect(doc.study.priceDate).toBe('2026-01-01');
    expect(doc.study.scenarios.map((s: { id: string }) => s.id)).toEqual(['kavya-late-order', 'noah-amnesia']);
    expect(doc.study.policies.map((p: { name: string }) => p.name)).toEqual(['full', 'window-turns:turns=2', 'window-tokens:budget=40']);
    expect(doc.study.policies[1].params).toEqual({ turns: 2, naive: false, forget: 'cascade', moderation: 'none' });
    expect([doc.policies.length, doc.summary.length, doc.turns.length, doc.probes.length]).toEqual([3, 6, 24, 3]);
  });

  it('writes money as exact 12-decimal USD strings', () => {
    const first = JSON.parse(text).turns[0];
    // kavya turn 1 under full, chars4: input 49 chars → 12 tokens × 150,000 pico = 1,800,000;
    // output 62 chars → 15 tokens × 600,000 pico = 9,000,000; total 10,800,000 pico.
    expect([first.scenario, first.policy, first.turn]).toEqual(['kavya-late-order', 'full', 1]);
    expect(first.cost).toBe('0.000010800000');
    expect(first.costInput).toBe('0.000001800000');
    expect(first.costOutput).toBe('0.000009000000');
  });

  it('reads back to the same records, bigints exact', () => {
    const back = parseResultsJson(text, 'results.json');
    expect(back.results).toEqual(results);
    expect(back.study).toEqual(info);
    expect(back.meta).toEqual(meta);
    expect(picoFromUsd('-1.5')).toBe(-1_500_000_000_000n);
  });

  it('has the timestamp in meta only: two runs differ on that line alone', () => {
    const other = resultsJson(results, info, { ...meta, generatedAt: '2027-12-31T23:59:59.000Z' });
    const a = text.split('\n');
    const b = other.split('\n');
    expect(a.filter((line, i) => line !== b[i]).map((l) => l.slice(0, 9))).toEqual([' "meta": ']);
  });

  it('rejects what is not a ctxsim results.json, naming the file', () => {
    expect(() => parseResultsJson('{"schemaVersion": 99}', 'old.json')).toThrow(CtxsimError);
    expect(() => parseResultsJson('{"schemaVersion": 99}', 'old.json')).toThrow('old.json: not a ctxsim results.json (schemaVersion: expected 1, got 99)');
    expect(() => parseResultsJson('nope', 'x.json')).toThrow(/^x\.json: not a ctxsim results\.json/);
  });
});
