import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { runStudy } from '../src/engine/run.js';
import { policiesCsv, probesCsv, summaryCsv, turnsCsv, violationsCsv } from '../src/records/csv.js';
import { parseResultsJson, resultsJson } from '../src/records/json.js';
import { policiesFromFlags } from '../src/study/study.js';
import { capture, csvRows } from './_io.js';
import { fixture, shipped } from './_policies.js';
import { ROOT } from './_shared.js';

const results = runStudy({
  conversations: [shipped('voice-assistant-tasks.yaml'), fixture('safety/forget-and-inject.yaml')],
  policies: policiesFromFlags(['window-turns:turns=2,naive=true', 'facts:forget=naive']),
  seed: 42,
  models: ['gpt-4o-mini'],
  tokenizer: 'chars4',
});
/** The header's columns from the first of `names` on, as many as `names` (a column added later comes after them all). */
const from = (csv: string, names: string) => {
  const header = csv.split('\n')[0]!.split(',');
  const at = header.indexOf(names.split(',')[0]!);
  return header.slice(at, at + names.split(',').length).join(',');
};

describe('safety columns, appended after the existing ones', () => {
  it.each([
    ['turns.csv', () => turnsCsv(results), 'cache_write_tokens,estimated_tokens,violations,zombie_prompt,injection_exposed,calls'],
    ['summary.csv', () => summaryCsv(results), 'latency_p95_ms,zombie_artifacts,zombie_prompt_turns,injection_exposure_turns,violations,stored_bytes,zombies,zombie_probes,overflow_probes,weight,model,answered,answer_retention,memory,judged_unsent'],
    ['probes.csv', () => probesCsv(results), 'age_turns,source,expected,violation,model,answer,judged,judged_unsent'],
    ['policies.csv', () => policiesCsv(results), 'pareto,stored_bytes_mean,stored_bytes_p95,zombie_artifacts,zombie_prompt_turns,zombie_probes,injection_exposure_turns,violations,overflow_probes,latency_p95_ms,model,answered,answer_retention,memory,judged_unsent'],
  ])('%s', (_file, csv, names) => expect(from(csv(), names)).toBe(names));

  it('violations.csv: scenario, policy, turn, rule, detail (and the call)', () => {
    const csv = violationsCsv(results);
    const rows = csvRows(csv, ['scenario', 'policy', 'turn', 'rule', 'detail', 'call', 'model']).map((r) => Object.values(r));
    expect(rows[0]).toEqual(['voice-assistant-tasks', 'window-turns:turns=2,naive=true', '5', 'orphan-tool-result', 'tool result call_3_1 at 1 has no tool call before it', '1', 'gpt-4o-mini']);
    // 4 on the voice assistant (see safety-rules) and 1 on the fixture: turn 5 sends [result 3, reply 3, u4, a4];
    // none from the fact-sheet policy. The file ends with a newline.
    expect(rows.slice(4)).toEqual([['forget-and-inject', 'window-turns:turns=2,naive=true', '5', 'orphan-tool-result', 'tool result call_3_1 at 1 has no tool call before it', '1', 'gpt-4o-mini']]);
    expect(csv.at(-1)).toBe('\n');
  });

  it('results.json carries the violations and reads them back', () => {
    const doc = parseResultsJson(resultsJson(results, {} as never, { tool: 'ctxsim', version: '0', priceTable: 'x', generatedAt: 'x' }), 'r.json');
    expect(doc.results.violations).toEqual(results.violations);
    expect(doc.results.summary.map((s) => s.zombies)).toEqual([[], [], [], ['facts']]);
  });
});

describe('sharded runs carry the violations', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctxsim-safety-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => delete process.env.SOURCE_DATE_EPOCH);

  async function cli(...args: string[]) {
    const io = capture();
    return { code: await runMain(args, io), ...io };
  }

  it('shards 1/2 + 2/2 merged equal the unsharded run byte for byte, violations.csv included', async () => {
    process.env.SOURCE_DATE_EPOCH = '1700000000';
    cpSync(join(ROOT, 'scenarios', 'voice-assistant-tasks.yaml'), join(dir, 's', 'voice-assistant-tasks.yaml'));
    cpSync(join(ROOT, 'test', 'fixtures', 'safety', 'forget-and-inject.yaml'), join(dir, 's', 'forget-and-inject.yaml'));
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['tokenizer: chars4', 'scenarios: [s/*.yaml]', 'policies:', '  - window-turns: {turns: 2, naive: true}', '  - facts: {forget: naive}', '  - retrieval', ''].join('\n'));
    expect((await cli('run', study, '--out', join(dir, 'whole'), '--quiet')).code).toBe(0);
    for (const k of [1, 2]) expect((await cli('run', study, '--shard', `${k}/2`, '--out', join(dir, `p${k}`), '--quiet')).code).toBe(0);
    expect((await cli('merge', join(dir, 'p1'), join(dir, 'p2'), '--out', join(dir, 'merged'), '--quiet')).code).toBe(0);
    const files = readdirSync(join(dir, 'whole')).sort();
    expect(files).toContain('violations.csv');
    expect(readdirSync(join(dir, 'merged')).sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(dir, 'merged', f)).equals(readFileSync(join(dir, 'whole', f))), f).toBe(true);
    expect(readFileSync(join(dir, 'whole', 'violations.csv'), 'utf8').split('\n').length).toBe(1 + 5 + 1);
  });
});
