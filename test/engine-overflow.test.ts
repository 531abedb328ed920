import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { byPolicy, summaryOf } from '../src/engine/summary.js';
import { parseResultsJson } from '../src/records/json.js';
import type { IO } from '../src/cli/_io.js';
import { probe, turn } from './fixtures/report/records.js';
import { priceFile, tinyWindowScenario } from './_pricing.js';
import { tempDir } from './_tmp.js';

/**
 * A call over the model's context window would be rejected by a real
 * backend: it is not charged, and the probes scored on it are `overflow`,
 * not retained. Every figure below is worked by hand.
 *
 * Model `tiny`: a context window of 50 tokens, $1 per million input tokens
 * (1,000,000 pico a token), $2 per million output tokens; no prompt caching
 * (no cache-read price). Its name puts it in the `large` latency class:
 * 500 ms to the first token, 4,000 prompt tokens/s, 50 output tokens/s.
 *
 * Every message is 32 characters: 8 tokens under chars4 (no chat overhead).
 * Turn 1 states the fact `code`; turns 2 and 4 probe it.
 *
 * full sends everything: 8, 24, 40, then 56 tokens at turn 4 — over 50.
 *   cost: t1 8·1e6 + 8·2e6 = 24e6; t2 24e6 + 16e6 = 40e6; t3 40e6 + 16e6 = 56e6;
 *   t4 rejected: 0 → 120e6 pico = $0.000120 a conversation, $0.1200 per 1,000.
 *   input tokens 8 + 24 + 40 + 56 = 128 (the rejected prompt is counted);
 *   output 8 + 8 + 8 + 0 = 24 (no reply to a rejected call).
 *   latency: 500 + 8/4000 s + 8/50 s = 662 ms; 666; 670; 0 (rejected) → p95 670.
 *   probes: t2 retained, t4 overflow → 1/2, 50.0%, 1 overflow probe.
 * window-turns:turns=1 sends the last exchange and the new message: 8, 24, 24, 24.
 *   cost: 24e6 + 40e6 + 40e6 + 40e6 = 144e6 pico = $0.000144, $0.1440 per 1,000.
 *   input 80, output 32; latency 662, 666, 666, 666 → p95 666.
 *   probes: t2 retained (turn 1 is in the window), t4 missing → 1/2, 50.0%.
 * Pareto: full is cheaper at the same retention, so window-turns is dominated.
 */


async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: IO = { out: (t) => void (out += t), err: (t) => void (err += t), isTTY: false };
  const code = await runMain(args, io);
  return { code, out, err };
}

describe('a call over the context window', () => {
  const prices = priceFile({ tiny: { litellm_provider: 'custom', input_cost_per_token: 0.000001, output_cost_per_token: 0.000002, max_input_tokens: 50 } });

  it('scores its probes as overflow, counts them apart, and warns naming the policy and its turns', async () => {
    const dir = tempDir();
    const out = join(dir, 'out');
    const base = ['run', '--scenario', tinyWindowScenario(dir), '--policy', 'full', '--policy', 'window-turns:turns=1', '--model', 'tiny', '--prices', prices, '--tokenizer', 'chars4'];
    const r = await cli([...base, '--out', out, '--quiet']);
    expect(r.code).toBe(0);
    const table = r.out.split('\n');
    expect(table[0]).toMatch(/^tiny · prices of \S+ · tokenizer chars4 · 1 conversation$/);
    // Turns over the window come before the other optional columns; the retention cell names the overflowed probe.
    expect(table.slice(1, table.indexOf(''))).toEqual([
      'policy                cost/1k conv USD  vs full                  retention  pareto  overflow turns',
      'full                            0.1200     0.0%  50.0% (1/2, 1 overflowed)  yes                  1',
      'window-turns:turns=1            0.1440   +20.0%                50.0% (1/2)  -                    0',
    ]);
    expect(r.out).toMatch(/\n\nVerdict: /);
    // Warnings are printed even with --quiet.
    expect(r.err).toBe("ctxsim: warning: full on tiny went over a context window on 1 of 4 turns: those calls would be rejected\n");

    const summary = readCsv(join(out, 'summary.csv'));
    expect(summary.map((s) => [s.policy, s.overflow_turns, s.probes, s.retained, s.stale, s.missing, s.overflow_probes, s.retention, s.first_lost_turn, s.total_cost_usd])).toEqual([
      ['full', '1', '2', '1', '0', '0', '1', '0.5000', '4', '0.00012000'],
      ['window-turns:turns=1', '0', '2', '1', '0', '1', '0', '0.5000', '4', '0.00014400'],
    ]);
    const probes = readCsv(join(out, 'probes.csv'));
    expect(probes.map((p) => [p.policy, p.turn, p.outcome, p.violation])).toEqual([
      ['full', '2', 'retained', 'false'],
      ['full', '4', 'overflow', 'false'],
      ['window-turns:turns=1', '2', 'retained', 'false'],
      ['window-turns:turns=1', '4', 'missing', 'false'],
    ]);
    // results.json reads back with the new outcome and count.
    const doc = parseResultsJson(readFileSync(join(out, 'results.json'), 'utf8'), 'results.json');
    expect(doc.results.probes.map((p) => p.outcome)).toEqual(['retained', 'overflow', 'retained', 'missing']);
    expect(doc.results.summary.map((s) => s.overflowProbes)).toEqual([1, 0]);
    const policies = readCsv(join(out, 'policies.csv'));
    expect(policies.map((p) => [p.policy, p.overflow_turns, p.overflow_probes, p.latency_p95_ms, p.pareto])).toEqual([
      ['full', '1', '1', '670', 'true'],
      ['window-turns:turns=1', '0', '0', '666', 'false'],
    ]);
  });

  it('prints no warning when no call goes over the window', async () => {
    const dir = tempDir();
    const r = await cli(['run', '--scenario', tinyWindowScenario(dir), '--policy', 'window-turns:turns=1', '--model', 'tiny', '--prices', prices, '--tokenizer', 'chars4', '--out', join(dir, 'out'), '--quiet']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
  });
});

describe('the per-policy row', () => {
  it('counts overflow probes apart from stale and missing, and takes latency p95 over the conversations', () => {
    const t = (scenario: string, n: number, latencyMs: number) => turn({ scenario, policy: 'p', turn: n, latencyMs });
    // a: turn latencies 10, 20, 30 → its p95 is the ceil(0.95 × 3) = 3rd smallest, 30; b: 5 → 5.
    const a = summaryOf([t('a', 1, 10), t('a', 2, 20), t('a', 3, 30)], [
      probe({ scenario: 'a', policy: 'p', turn: 2, outcome: 'retained' }),
      probe({ scenario: 'a', policy: 'p', turn: 3, outcome: 'overflow' }),
    ]);
    const b = summaryOf([t('b', 1, 5)], [probe({ scenario: 'b', policy: 'p', turn: 1, outcome: 'stale' })]);
    expect([a.probes, a.retained, a.stale, a.missing, a.overflowProbes, a.retention, a.firstLostTurn, a.latencyP95Ms]).toEqual([2, 1, 0, 0, 1, 0.5, 3, 30]);
    // Over both: 3 probes, 1 retained, 1 stale, 1 overflow; latency p95 of [30, 5] is the ceil(0.95 × 2) = 2nd smallest, 30.
    const [p] = byPolicy([a, b]);
    expect([p!.probes, p!.retained, p!.stale, p!.missing, p!.overflowProbes, p!.retention, p!.latencyP95Ms]).toEqual([3, 1, 1, 0, 1, 1 / 3, 30]);
  });
});

/** A CSV of plain cells (no quoting) as header-keyed rows. */
function readCsv(file: string): Record<string, string>[] {
  const [head, ...rows] = readFileSync(file, 'utf8').trimEnd().split('\n');
  const keys = head!.split(',');
  return rows.map((r) => Object.fromEntries(r.split(',').map((c, i) => [keys[i]!, c])));
}
