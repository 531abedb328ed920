import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scenarioFromFile } from '../src/scenario/load.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { runStudy } from '../src/engine/run.js';
import { conversation, trace, variant } from './_policies.js';
import { ROOT } from './_shared.js';

const kavya = scenarioFromFile(join(ROOT, 'scenarios/kavya-late-order.yaml'));
const noah = scenarioFromFile(join(ROOT, 'scenarios/noah-amnesia.yaml'));

describe('window-tokens on the late-order example (chars4)', () => {
  // chars4: 48 chars → 12, 61 → 15, 36 → 9, 74 → 18, 38 → 9 tokens; no overhead.
  // Walking back from the newest: 9, +18 = 27, +9 = 36, +15 = 51, +12 = 63.
  it.each([
    [100, 5, 63],
    [40, 3, 36],
    [25, 1, 9],
  ])('budget %i keeps %i messages, %i tokens', (budget, count, total) => {
    const tokens = new TokenCounter('chars4');
    const last = trace(kavya, `window-tokens:budget=${budget}`, tokens).at(-1)!.calls[0]!;
    expect(last.messages).toHaveLength(count);
    expect(tokens.prompt(last.messages)).toBe(total);
    expect(last.overBudget).toBe(false);
  });

  it('sends the newest user message alone, flagged, when it exceeds the budget', () => {
    const last = trace(kavya, 'window-tokens:budget=5').at(-1)!.calls[0]!;
    expect(last.messages.map((m) => m.content)).toEqual(['Add the DryFit ones to my cart please.']);
    expect(last.overBudget).toBe(true);
  });
});

describe('the amnesia example', () => {
  const run = (spec: string) =>
    runStudy({ conversations: [noah], policies: [variant(spec)], seed: 1, models: ['gpt-4o-mini'], tokenizer: 'auto' }).probes;

  it('window-turns:turns=3 has lost the name at turn 5', () => {
    expect(run('window-turns:turns=3')).toMatchObject([
      { scenario: 'noah-amnesia', policy: 'window-turns:turns=3', model: 'gpt-4o-mini', turn: 5, fact: 'name', outcome: 'missing', ageTurns: 4, source: 'none', expected: 'retained', violation: false },
    ]);
  });

  it('full still has it, verbatim', () => {
    expect(run('full')).toMatchObject([{ scenario: 'noah-amnesia', policy: 'full', model: 'gpt-4o-mini', turn: 5, fact: 'name', outcome: 'retained', ageTurns: 4, source: 'window', expected: 'retained', violation: false }]);
  });

  it('window-turns:turns=4 reaches back to turn 1', () => {
    expect(run('window-turns:turns=4')[0]!.outcome).toBe('retained');
  });
});

describe('window-turns and window', () => {
  const conv = conversation({
    id: 'w',
    system: 'sys',
    turns: [
      { user: 'one one one one', assistant: 'reply one one one' },
      { user: 'two', tools: [{ call: 'lookup', args: { q: 'x' }, result: 'found it' }], assistant: 'reply two' },
      { user: 'three three three three three three', assistant: 'reply three' },
      { user: 'four' },
    ],
  });

  it('window-turns keeps the last N exchanges with their tool messages', () => {
    const last = trace(conv, 'window-turns:turns=2').at(-1)!.calls[0]!.messages;
    expect(last.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'user']);
    expect(last[1]!.content).toBe('two');
  });

  it('window drops the earliest exchange while over budget', () => {
    // chars4: sys 1 | ex2: "two" 1 + tool call "lookup({"q":"x"})" 4 + "found it" 2 + "reply two" 2 = 9
    // | ex3: 35 chars → 8 + "reply three" 2 = 10 | "four" 1.
    // budget 14: fixed 2, room 12; exchanges 2+3 = 19 > 12 → drop ex2 → 10 ≤ 12; sent 1 + 10 + 1 = 12.
    const tokens = new TokenCounter('chars4');
    const last = trace(conv, 'window:turns=3,budget=14', tokens).at(-1)!.calls[0]!.messages;
    expect(last.map((m) => m.content)).toEqual(['sys', 'three three three three three three', 'reply three', 'four']);
    expect(tokens.prompt(last)).toBe(12);
  });

  it('sessionCap restarts the conversation after N exchanges', () => {
    const turns = trace(conv, 'full:sessionCap=2');
    // Turn 3 starts a new session: only the system prompt and the new user message.
    expect(turns[2]!.calls[0]!.messages.map((m) => m.content)).toEqual(['sys', 'three three three three three three']);
    expect(turns[3]!.calls[0]!.messages).toHaveLength(4);
  });
});
