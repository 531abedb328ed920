import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { scenarioFromText } from '../src/scenario/load.js';
import type { Conversation, Message } from '../src/types.js';
import { randomConversation, variant } from './_policies.js';

/**
 * The agent policies, hand-checked on one agent session: `mask-observations`
 * (older tool results become "[output of TOOL omitted]", the calls stay, the
 * round being read is whole), `clear-tool-results` (Anthropic's context
 * editing: past `trigger`, all but the newest `keep` tool uses cleared, unless
 * less than `clearAtLeast` would go; what clearing does to the cache), and
 * `compact` (one summarizer call when a prompt would pass `at` of the window,
 * inside a long turn too). The shared contract is checked for them in
 * policies-contract.test.ts; the properties here are each policy's own bound.
 */

const OUT = (name: string, n: number) => `${name} output ${n}: ${'lorem ipsum dolor sit amet '.repeat(20).trim()}`;
const SESSION = `id: agent
system: You fix bugs in the repository.
turns:
  - user: The date parser crashes on leap days; fix it.
    tools:
      - assistant: Searching.
        calls: [{call: search, args: {q: parse_date}, result: "${OUT('search', 1)}"}]
      - calls: [{call: read_file, args: {path: src/dates.py}, result: "${OUT('read_file', 2)}"}]
      - calls: [{call: run_tests, result: "${OUT('run_tests', 3)} FAILED test_leap_day"}]
      - calls:
          - {call: edit_file, args: {path: src/dates.py}, result: "${OUT('edit_file', 4)}"}
          - {call: run_tests, result: "${OUT('run_tests', 5)} passed"}
    facts: {failing_test: test_leap_day}
    assistant: Fixed the leap-day bug.
  - user: Which test was failing?
    probe: [failing_test]
    assistant: test_leap_day.
`;
const session = scenarioFromText('agent.yaml', SESSION);
const ctx = replayContext({ model: 'gpt-4o-mini', tokenizer: 'chars4', seed: 42 });

function sent(spec: string, c: Conversation = session, context = ctx): { calls: { turn: number; call: SentCall }[]; r: ReturnType<typeof replay> } {
  const calls: { turn: number; call: SentCall }[] = [];
  const r = replay(c, variant(spec), context, (turn, call) => calls.push({ turn, call }));
  return { calls, r };
}

/** Each tool result of a prompt: its content's first words. */
const results = (m: readonly Message[]) => m.filter((x) => x.role === 'tool').map((x) => x.content.split(':')[0]);

describe('mask-observations', () => {
  it('sends the newest `keep` results verbatim, older ones as a placeholder naming the tool; the calls stay', () => {
    const { calls } = sent('mask-observations:keep=2');
    // Turn 1, call 5 (after four rounds): results 1–3 masked? keep=2 counts the newest two, the round being read is whole.
    expect(calls.map((c) => results(c.call.plan.messages))).toEqual([
      [],
      ['search output 1'],
      ['search output 1', 'read_file output 2'],
      ['[output of search omitted]', 'read_file output 2', 'run_tests output 3'],
      ['[output of search omitted]', '[output of read_file omitted]', '[output of run_tests omitted]', 'edit_file output 4', 'run_tests output 5'],
      ['[output of search omitted]', '[output of read_file omitted]', '[output of run_tests omitted]', 'edit_file output 4', 'run_tests output 5'],
    ]);
    const last = calls[5]!.call.plan.messages;
    expect(last.filter((x) => x.toolCalls?.length).map((x) => x.toolCalls!.map((c) => c.name).join('+'))).toEqual(['search', 'read_file', 'run_tests', 'edit_file+run_tests']);
    // The round being read is whole even with keep=0; the earlier ones are all masked.
    expect(results(sent('mask-observations:keep=0').calls[4]!.call.plan.messages)).toEqual([
      '[output of search omitted]',
      '[output of read_file omitted]',
      '[output of run_tests omitted]',
      'edit_file output 4',
      'run_tests output 5',
    ]);
  });

  it('with batch, masks results a whole batch at a time, so more than keep may stay verbatim for a while', () => {
    const { calls } = sent('mask-observations:keep=1,batch=2');
    expect(results(calls[3]!.call.plan.messages)).toEqual(['[output of search omitted]', '[output of read_file omitted]', 'run_tests output 3']);
    // Three older results: two go (a batch), one stays until the next batch fills.
    expect(results(calls[4]!.call.plan.messages)).toEqual(['[output of search omitted]', '[output of read_file omitted]', 'run_tests output 3', 'edit_file output 4', 'run_tests output 5']);
  });

  it('a masked result is the same message on every later call, so the masked prefix stays cached', () => {
    const { calls } = sent('mask-observations:keep=1');
    const masked = (k: number) => calls[k]!.call.plan.messages.find((x) => x.content === '[output of search omitted]');
    expect(masked(3)).toBeDefined();
    expect(masked(4)).toBe(masked(3));
    expect(masked(5)).toBe(masked(3));
  });

  it('costs less than full on a long agent session, and the masked tool result loses its fact', () => {
    const full = sent('full').r;
    const masked = sent('mask-observations:keep=1').r;
    const input = (r: ReturnType<typeof replay>) => r.turns.reduce((n, t) => n + t.inputTokens, 0);
    expect(input(masked)).toBeLessThan(input(full));
    // The failing test's name was in a result that turn 2 no longer sees verbatim.
    expect(full.probes.map((p) => p.outcome)).toEqual(['retained']);
    expect(masked.probes.map((p) => p.outcome)).toEqual(['missing']);
  });
});

describe('clear-tool-results', () => {
  const size = (k: number, spec: string) => sent(spec).calls[k]!.call.promptTokens;

  it('clears nothing under the trigger; past it, every result but the newest `keep` tool uses', () => {
    expect(results(sent('clear-tool-results:trigger=100000').calls[4]!.call.plan.messages)).toEqual(['search output 1', 'read_file output 2', 'run_tests output 3', 'edit_file output 4', 'run_tests output 5']);
    const trigger = size(3, 'full') - 1;
    const { calls } = sent(`clear-tool-results:trigger=${trigger},keep=1`);
    // Call 4 passes the trigger: results but the newest are cleared; call 3 did not.
    expect(results(calls[2]!.call.plan.messages)).toEqual(['search output 1', 'read_file output 2']);
    expect(results(calls[3]!.call.plan.messages)).toEqual(['[result of search cleared]', '[result of read_file cleared]', 'run_tests output 3']);
    // The round being read stays whole whatever `keep`.
    expect(results(calls[4]!.call.plan.messages)).toEqual(['[result of search cleared]', '[result of read_file cleared]', '[result of run_tests cleared]', 'edit_file output 4', 'run_tests output 5']);
  });

  it('clears nothing when that would free fewer than clearAtLeast tokens, and never the excluded tools', () => {
    const trigger = size(3, 'full') - 1;
    expect(results(sent(`clear-tool-results:trigger=${trigger},keep=1,clearAtLeast=100000`).calls[3]!.call.plan.messages)).toEqual(['search output 1', 'read_file output 2', 'run_tests output 3']);
    expect(results(sent(`clear-tool-results:trigger=${trigger},keep=1,exclude=read_file+search`).calls[4]!.call.plan.messages)).toEqual([
      'search output 1',
      'read_file output 2',
      '[result of run_tests cleared]',
      'edit_file output 4',
      'run_tests output 5',
    ]);
  });

  it('rewrites the cached prefix: the call that clears reads less from the cache than the call before it wrote', () => {
    // Long results, so prompts pass the provider's minimum cacheable prefix (1,024 tokens on gpt-4o-mini).
    const long = scenarioFromText('long.yaml', SESSION.replace(/lorem ipsum dolor sit amet/g, 'lorem ipsum dolor sit amet '.repeat(12).trim()));
    const full = sent('full', long);
    const trigger = full.calls[3]!.call.promptTokens - 1;
    const cleared = sent(`clear-tool-results:trigger=${trigger},keep=1`, long);
    // Calls 1–3 are the same; call 4 clears results 1 and 2, so only the prefix before the first cleared one is read.
    expect(cleared.r.turns[0]!.cachedTokens).toBeLessThan(full.r.turns[0]!.cachedTokens);
    expect(cleared.r.turns[0]!.inputTokens).toBeLessThan(full.r.turns[0]!.inputTokens);
  });
});

describe('compact', () => {
  it('compacts inside a long turn when a prompt would pass `at` of the window: one summarizer call, the user waits', () => {
    const limit = sent('full').calls[3]!.call.promptTokens - 1;
    const { calls } = sent(`compact:window=${limit},at=1,keepRecent=1,summaryTokens=60`);
    const upkeep = calls.map((c) => c.call.plan.upkeep.map((u) => `${u.kind}${u.sync ? ' (sync)' : ''}`).join());
    // The first compaction is on call 4, inside turn 1; the window is tight, so later calls may compact again.
    expect(upkeep.indexOf('summary (sync)')).toBe(3);
    expect(upkeep.every((u) => u === '' || u === 'summary (sync)')).toBe(true);
    // After compacting: the summary, the user message, the newest kept round and the round being read.
    const after = calls[3]!.call.plan.messages;
    expect(after.map((m) => (m.origin ? m.origin : m.role))).toEqual(['system', 'summary', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(results(after)).toEqual(['read_file output 2', 'run_tests output 3']);
    // The round holding the failing test's name was kept verbatim: turn 2 still has it.
    expect(sent(`compact:window=${limit},at=1,keepRecent=1,summaryTokens=60`).r.probes.map((p) => p.outcome)).toEqual(['retained']);
  });

  it('sends everything while prompts stay under the threshold', () => {
    const full = sent('full');
    const roomy = sent('compact');
    expect(roomy.calls.map((c) => c.call.plan.messages)).toEqual(full.calls.map((c) => c.call.plan.messages));
  });

  it('keeps every prompt under the threshold once it can (property, random agent conversations)', () => {
    fc.assert(
      fc.property(randomConversation, fc.integer({ min: 200, max: 2000 }), (c, window) => {
        for (const { call } of sent(`compact:window=${window},at=1,keepRecent=1,summaryTokens=40`, c).calls) {
          const m = call.plan.messages;
          // Over the threshold only when nothing is left to fold: the pinned prompt, the summary, at most one step, the current turn.
          if (call.promptTokens > window) {
            const memory = m.filter((x) => !x.origin && x.role === 'user');
            expect(memory.length).toBeLessThanOrEqual(2);
          }
        }
      }),
      { seed: 42, numRuns: 40 },
    );
  });
});
