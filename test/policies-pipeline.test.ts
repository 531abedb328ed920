import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { loadStudy, policyFromString } from '../src/study/study.js';
import type { Message } from '../src/types.js';
import { REGISTRY } from '../src/policies/index.js';
import type { PolicyVariant } from '../src/policies/spec.js';
import { asyncProblems } from './_io.js';
import { tempDir } from './_tmp.js';

/**
 * `pipeline`: stages in order, as OpenHands chains condensers — tool-result
 * rewriting first (mask-observations, clear-tool-results), then one memory
 * policy that sees the conversation as they show it: it measures each
 * message as sent and its summarizer reads the rewritten results. Named by
 * its stages, swept by theirs, written on the command line or as a list in a
 * study; the contract is checked in policies-contract.test.ts.
 */

const OUT = (name: string, n: number) => `${name} output ${n}: ${'lorem ipsum dolor sit amet '.repeat(20).trim()}`;
const SESSION = scenarioFromText(
  'agent.yaml',
  `id: agent
system: You fix bugs in the repository.
turns:
  - user: The date parser crashes on leap days; fix it.
    tools:
      - calls: [{call: search, args: {q: parse_date}, result: "${OUT('search', 1)}"}]
      - calls: [{call: read_file, args: {path: src/dates.py}, result: "${OUT('read_file', 2)} ticket DATE-42"}]
      - calls: [{call: run_tests, result: "${OUT('run_tests', 3)}"}]
    facts: {ticket: DATE-42}
    assistant: Fixed the leap-day bug.
  - user: Now add a test for it.
    tools:
      - calls: [{call: edit_file, args: {path: tests/test_dates.py}, result: "${OUT('edit_file', 4)}"}]
      - calls: [{call: run_tests, result: "${OUT('run_tests', 5)}"}]
    assistant: Added test_leap_day.
  - user: Which ticket was this?
    probe: [ticket]
    assistant: DATE-42.
`,
);
const ctx = replayContext({ model: 'gpt-4o-mini', tokenizer: 'chars4', seed: 42 });

function run(spec: string) {
  const variants = policyFromString(spec);
  if (typeof variants === 'string') throw new Error(variants);
  const calls: { turn: number; call: SentCall }[] = [];
  const r = replay(SESSION, variants[0]!, ctx, (turn, call) => calls.push({ turn, call }));
  return { calls, r, name: variants[0]!.name };
}

const results = (m: readonly Message[]) => m.filter((x) => x.role === 'tool').map((x) => x.content.split(':')[0]);

describe('pipeline specs', () => {
  it('are named by their stages, each canonical (parameters in the order the stage declares them), and a stage’s list of values sweeps', () => {
    const names = (spec: string) => {
      const v = policyFromString(spec);
      return typeof v === 'string' ? v : v.map((x) => x.name);
    };
    expect(names('pipeline:mask-observations:keep=5|10>summary-buffer:keepRecent=1,budget=300')).toEqual([
      'pipeline:mask-observations:keep=5 > summary-buffer:budget=300,keepRecent=1',
      'pipeline:mask-observations:keep=10 > summary-buffer:budget=300,keepRecent=1',
    ]);
    expect(names('pipeline:summary-buffer > mask-observations')).toBe('pipeline stage 1: summary-buffer must be last (only mask-observations and clear-tool-results come before the last stage)');
    expect(names('pipeline:mask-observations > pipeline:full')).toBe('pipeline stage 2: a pipeline cannot be a stage');
    expect(names('pipeline:mask-observations > nope')).toMatch(/^pipeline stage 2: unknown policy "nope"/);
    expect(names('pipeline:mask-observations >')).toBe('pipeline: expected stages joined by ">", got "mask-observations >"');
    // Given nothing, the hybrid with its stages' defaults; common parameters go to the last stage.
    expect(names('pipeline')).toEqual(['pipeline:mask-observations > summary-buffer']);
    const [v] = REGISTRY.get('pipeline')!.variants!([['moderation', 'drop']]) as PolicyVariant[];
    expect([v!.name, v!.params.moderation]).toEqual(['pipeline:mask-observations > summary-buffer:moderation=drop', 'drop']);
  });

  it('may be a list of stages in a study, each an entry of its own, sweeping as specs do', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 's.yaml'), 'id: s\nturns:\n  - user: hi\n');
    writeFileSync(join(dir, 'study.yaml'), ['scenarios: [s.yaml]', 'policies:', "  - pipeline: [{mask-observations: {keep: [5, 10]}}, 'summary-buffer:budget=300']", '  - pipeline: [{summary: {}}, mask-observations]', ''].join('\n'));
    expect(await asyncProblems(() => loadStudy(join(dir, 'study.yaml')))).toEqual([
      expect.stringMatching(/study\.yaml:4:5 policies\[1\]: pipeline stage 1: summary must be last/),
    ]);
    writeFileSync(join(dir, 'study.yaml'), ['scenarios: [s.yaml]', 'policies:', "  - pipeline: [{mask-observations: {keep: [5, 10]}}, 'summary-buffer:budget=300']", ''].join('\n'));
    expect((await loadStudy(join(dir, 'study.yaml'))).policies.map((v) => v.name)).toEqual([
      'pipeline:mask-observations:keep=5 > summary-buffer:budget=300',
      'pipeline:mask-observations:keep=10 > summary-buffer:budget=300',
    ]);
  });
});

describe('a pipeline', () => {
  it('of rewriting stages alone sends what the stage alone sends', () => {
    expect(run('pipeline:mask-observations:keep=2').calls.map((c) => c.call.plan.messages)).toEqual(run('mask-observations:keep=2').calls.map((c) => c.call.plan.messages));
  });

  it('gives its memory the masked sizes: summary-buffer folds only when the masked context outgrows its budget', () => {
    // Turn 1's exchange is 454 tokens raw (chars4), 54 with its results masked: alone it breaks a 400-token budget only raw.
    const raw = run('summary-buffer:budget=400,keepRecent=4');
    const masked = run('pipeline:mask-observations:keep=1 > summary-buffer:budget=400,keepRecent=4');
    const folds = (r: ReturnType<typeof run>) => r.calls.filter((c) => c.call.plan.upkeep.length).map((c) => c.turn);
    expect(folds(raw)).toEqual([2]);
    expect(folds(masked)).toEqual([]);
    // What it sends is the memory's prompt, masked: turn 3 holds every stored round, older results as placeholders.
    const last = masked.calls.at(-1)!.call.plan.messages;
    expect(results(last)).toEqual(['[output of search omitted]', '[output of read_file omitted]', '[output of run_tests omitted]', '[output of edit_file omitted]', 'run_tests output 5']);
  });

  it('lets the memory’s summarizer read the results as masked: a fact only in a masked result is not summarized', () => {
    const plain = run('summary-buffer:budget=400,keepRecent=0');
    const masked = run('pipeline:mask-observations:keep=0 > summary-buffer:budget=400,keepRecent=0');
    const summaries = (r: ReturnType<typeof run>) => r.calls.flatMap((c) => c.call.plan.messages.filter((m) => m.origin === 'summary').map((m) => m.content));
    expect(summaries(plain).some((t) => t.includes('DATE-42'))).toBe(true);
    expect(summaries(masked).some((t) => t.includes('DATE-42'))).toBe(false);
    expect(plain.r.probes[0]!.outcome).toBe('retained');
    expect(masked.r.probes[0]!.outcome).toBe('missing');
  });
});
