import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { checkPolicyContract } from '../src/policies/contract/checker.js';
import { planProblems } from '../src/policies/contract/plan-checks.js';
import { POLICIES } from '../src/policies/index.js';
import { scenarioFromFile, scenarioFromText } from '../src/scenario/load.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message } from '../src/types.js';
import { itShared, ROOT } from './_shared.js';
import { variant } from './_policies.js';

const COOKBOOK = join(ROOT, 'test/fixtures/scenarios/cookbook-names.yaml');
const cookbook = scenarioFromFile(COOKBOOK, 'test/fixtures/scenarios/cookbook-names.yaml');

/** The prompt tokens of turn 1 of `full` on `model`, as a run counts them. */
function firstCall(c: Conversation, model: string): number {
  return replay(c, variant('full'), replayContext({ seed: 42, model, tokenizer: 'auto' })).turns[0]!.inputTokens;
}

/** Problems of the scenario text, one line each. */
function problems(yaml: string): string[] {
  try {
    scenarioFromText('s.yaml', yaml);
  } catch (e) {
    return (e as Error).message.split('\n');
  }
  throw new Error('expected a ScenarioError');
}

describe('the OpenAI cookbook example as a scenario file (system messages with names)', () => {
  it('loads its five system messages, in order, with their names, and the user message', () => {
    expect(cookbook.system.map((m) => [m.role, m.name ?? null, m.content.slice(0, 20)])).toEqual([
      ['system', null, 'You are a helpful, p'],
      ['system', 'example_user', 'New synergies will h'],
      ['system', 'example_assistant', 'Things working well '],
      ['system', 'example_user', "Let's circle back wh"],
      ['system', 'example_assistant', "Let's talk later whe"],
    ]);
    expect(cookbook.turns.map((t) => t.user.content)).toEqual(["This late pivot means we don't have time to boil the ocean for the client deliverable."]);
  });

  it('its first call under full is 129 prompt tokens on gpt-4 (cl100k_base) and 124 on gpt-4o (o200k_base)', () => {
    expect(firstCall(cookbook, 'gpt-4')).toBe(129);
    expect(firstCall(cookbook, 'gpt-4o')).toBe(124);
  });

  it('without the names, or with the system messages merged into one, the count is not the cookbook’s', () => {
    const unnamed = { ...cookbook, system: cookbook.system.map(({ name: _name, ...m }) => m) };
    const merged = { ...cookbook, system: [{ role: 'system', content: cookbook.system.map((m) => m.content).join('\n\n') } satisfies Message] };
    expect(firstCall(unnamed, 'gpt-4')).toBeLessThan(129);
    expect(firstCall(merged, 'gpt-4')).toBeLessThan(129);
  });

  itShared('tiktoken_cookbook_example/example_counts.json', 'holds the cookbook’s messages verbatim, and its first call is what the notebook printed for gpt-4 and gpt-4o', (path) => {
    const data = JSON.parse(readFileSync(path, 'utf8')).num_tokens_from_messages as {
      example_messages: Message[];
      printed_counts_current_version: { model: string; api: number }[];
    };
    const sent = [...cookbook.system, ...cookbook.turns.map(({ user: { turn: _turn, ...m } }) => m)];
    expect(sent).toEqual(data.example_messages);
    for (const model of ['gpt-4', 'gpt-4o']) {
      expect(firstCall(cookbook, model), model).toBe(data.printed_counts_current_version.find((r) => r.model === model)!.api);
    }
  });
});

const SEVERAL = `
id: several
system:
  - content: You are a support agent for an online store.
  - name: example_user
    content: Where is order SE-10423?
  - name: example_assistant
    content: It ships tomorrow.
turns:
  - user: Hi, I'm Kavya. My order SE-10423 is late.
    names: {user: kavya, assistant: agent}
    facts: {order_id: SE-10423}
    assistant: Sorry Kavya, let me check.
  - role: user
    name: kavya
    content: Which order was it again?
    probe: [order_id]
  - role: assistant
    name: agent
    content: Order SE-10423.
  - user: Thanks.
    assistant: You are welcome.
`;

describe('several pinned system messages', () => {
  const several = scenarioFromText('several.yaml', SEVERAL);

  it('keeps the names of user and assistant messages, in the turn form (names:) and the message form (name:)', () => {
    expect(several.turns.map((t) => [t.user.name ?? null, t.assistant?.name ?? null])).toEqual([
      ['kavya', 'agent'],
      ['kavya', 'agent'],
      [null, null],
    ]);
  });

  it('every built-in policy sends them first, in order, on every call', () => {
    for (const policy of POLICIES) {
      let calls = 0;
      replay(several, variant(policy.id), replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' }), (_turn, call) => {
        calls++;
        expect(call.plan.messages.slice(0, 3), policy.id).toEqual(several.system);
      });
      expect(calls, policy.id).toBe(3);
    }
  });

  it('every built-in policy keeps the contract on them', () => {
    for (const policy of POLICIES) expect(checkPolicyContract(policy, [several]), policy.id).toEqual([]);
  });

  it('system-pinned fails a prompt that leaves one out, or sends them out of order', () => {
    const tokens = new TokenCounter('chars4');
    const [s1, s2, s3] = several.system as [Message, Message, Message];
    const user = several.turns[0]!.user;
    const rules = (messages: Message[]) =>
      planProblems({ messages, overBudget: false, upkeep: [], stablePrefix: messages.length - 1 }, { system: several.system, pending: [user], budget: undefined, tokens })
        .filter((p) => p.rule === 'system-pinned')
        .map((p) => `${p.rule}: ${p.detail}`);
    expect(rules([s1, s2, s3, user])).toEqual([]);
    expect(rules([s1, s3, user])).toEqual(["system-pinned: message 1 is not the scenario's system message 2 of 3"]);
    expect(rules([s1, s3, s2, user])).toEqual(["system-pinned: message 1 is not the scenario's system message 2 of 3"]);
    expect(rules([s1, s2, { ...s3, name: 'someone_else' }, user])).toEqual(["system-pinned: message 2 is not the scenario's system message 3 of 3"]);
  });

  it('a system: text is one unnamed system message, as a list of one is', () => {
    const text = scenarioFromText('a.yaml', 'id: a\nsystem: Be brief.\nturns: [{user: hi}]');
    const list = scenarioFromText('b.yaml', 'id: a\nsystem: [{content: Be brief.}]\nturns: [{user: hi}]');
    expect(text.system).toEqual([{ role: 'system', content: 'Be brief.' }]);
    expect(list.system).toEqual(text.system);
    expect(scenarioFromText('c.yaml', 'id: a\nturns: [{user: hi}]').system).toEqual([]);
  });

  it('rejects a number, an empty list, a message without content or with an unknown key, an empty name, and a name for a reply that is not there', () => {
    expect(problems('id: a\nsystem: []\nturns: [{user: hi}]')).toEqual(["s.yaml:2:9 system: expected the system prompt's text, or a list of messages {content, name}, got an empty list"]);
    expect(problems('id: a\nsystem: 42\nturns: [{user: hi}]')).toEqual(["s.yaml:2:9 system: expected the system prompt's text, or a list of messages {content, name}"]);
    expect(problems('id: a\nsystem: [{name: x}]\nturns: [{user: hi}]')).toEqual(['s.yaml:2:10 system[0].content: required but missing']);
    expect(problems('id: a\nsystem: [{content: x, role: system}]\nturns: [{user: hi}]')).toEqual(['s.yaml:2:23 system[0].role: unknown key "role"']);
    expect(problems("id: a\nturns: [{role: user, content: hi, name: ''}]")).toEqual(['s.yaml:2:41 turns[0].name: expected a non-empty name, got ""']);
    expect(problems('id: a\nturns: [{user: hi, names: {assistant: bot}}]')).toEqual(['s.yaml:2:39 turns[0].names.assistant: a name for a reply the turn does not have (no assistant:)']);
  });
});
