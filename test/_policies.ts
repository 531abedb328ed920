/** Helpers for the policy tests: build conversations, drive a policy session turn by turn. */
import { fileURLToPath } from 'node:url';
import { streamFor } from '../src/engine/replay.js';
import type { PolicyVariant } from '../src/policies/spec.js';
import type { PromptPlan } from '../src/policies/types.js';
import { loadScenarioFile, parseScenario } from '../src/scenario/load.js';
import { policyFromString } from '../src/study/study.js';
import { messageText, TokenCounter } from '../src/tokens/counter.js';
import type { Conversation, Message, UpkeepCall } from '../src/types.js';

/** A scenario from YAML text. */
export function scenario(yaml: string, file = 'test.yaml'): Conversation {
  return parseScenario(file, yaml);
}

/** A conversation built through the real loader from a scenario document. */
export function conversation(doc: Record<string, unknown>): Conversation {
  return parseScenario('test.json', JSON.stringify(doc));
}

/** One policy variant from a spec string such as `summary:threshold=40`. */
export function variant(spec: string): PolicyVariant {
  const r = policyFromString(spec);
  if (typeof r === 'string' || r.length !== 1) throw new Error(`bad spec ${spec}: ${String(r)}`);
  return r[0]!;
}

/** What a policy did in one turn: each model call's plan, then the upkeep after the turn. */
export interface TurnTrace {
  turn: number;
  calls: PromptPlan[];
  after: UpkeepCall[];
}

/** Drives a session the way the replay engine does: one call after the user message, one more after tool results. */
export function trace(conversation: Conversation, spec: string, tokens = new TokenCounter('chars4'), seed = 42): TurnTrace[] {
  const v = variant(spec);
  const session = v.policy.start(conversation, v.params, { tokens, random: streamFor(seed, conversation.id, v.name), model: 'gpt-4o-mini' });
  let time = 0;
  return conversation.turns.map((turn) => {
    if (turn.index > 1) time += turn.gapSeconds;
    const info = { turn, time };
    const calls = [session.prompt([turn.user], info)];
    if (turn.tools.length) calls.push(session.prompt([turn.user, ...turn.tools], info));
    const after = session.commit([turn.user, ...turn.tools, ...(turn.assistant ? [turn.assistant] : [])], info);
    return { turn: turn.index, calls, after };
  });
}

/** A prompt as short labels: `system`, `summary`, `facts`, `u1`, `a1`, `call3`, `tool3`, and `r:u1`, `r:tool3` for retrieved memories. */
export function labels(messages: readonly Message[]): string[] {
  return messages.map((m) => {
    if (m.origin === 'retrieved') {
      const [, turn, what] = /^Earlier \(turn (\d+), ([^)]+)\)/.exec(m.content)!;
      return `r:${KIND[what!]}${turn}`;
    }
    if (m.origin) return m.origin;
    if (m.role === 'system') return 'system';
    const kind = m.role === 'user' ? 'u' : m.role === 'tool' ? 'tool' : m.toolCalls?.length ? 'call' : 'a';
    return `${kind}${m.turn}`;
  });
}

const KIND: Record<string, string> = { user: 'u', assistant: 'a', 'tool call': 'call', 'tool result': 'tool' };

/** The whole text of a prompt, lower-cased, for "is this value sent" checks. */
export function sentText(messages: readonly Message[]): string {
  return messages.map(messageText).join('\n').toLowerCase();
}

/** A scenario file under test/fixtures. */
export function fixture(name: string): Conversation {
  return loadScenarioFile(fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), `test/fixtures/${name}`);
}

/** A shipped scenario under scenarios/. */
export function shipped(name: string): Conversation {
  return loadScenarioFile(fileURLToPath(new URL(`../scenarios/${name}`, import.meta.url)), `scenarios/${name}`);
}
