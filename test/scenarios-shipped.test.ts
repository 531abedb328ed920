import { readdirSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runStudy } from '../src/engine/run.js';
import { normalize } from '../src/text/normalize.js';
import { scenarioFromFile } from '../src/scenario/load.js';
import { policiesFromFlags } from '../src/study/study.js';
import type { Conversation, Message, Turn } from '../src/types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCENARIOS = join(ROOT, 'scenarios');
const FIXTURES = join(ROOT, 'test', 'fixtures');

const shippedFiles = readdirSync(SCENARIOS)
  .filter((f) => ['.yaml', '.yml', '.json'].includes(extname(f)))
  .sort();

function load(name: string): Conversation {
  return scenarioFromFile(join(SCENARIOS, name), `scenarios/${name}`);
}

/** Every message of a turn, in the order a policy would send them. */
function messagesOf(t: Turn): Message[] {
  return [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])];
}

function textOf(t: Turn): string {
  return normalize(messagesOf(t).map((m) => [m.content, ...(m.toolCalls ?? []).map((c) => c.arguments)].join('\n')).join('\n'));
}

/** turn index → facts, for the turns that state any. */
function factTurns(c: Conversation): Record<number, Record<string, string>> {
  return Object.fromEntries(c.turns.filter((t) => Object.keys(t.facts).length).map((t) => [t.index, { ...t.facts }]));
}

/** turn index → probed facts, for the turns that probe any. */
function probeTurns(c: Conversation): Record<number, string[]> {
  return Object.fromEntries(c.turns.filter((t) => t.probe.length).map((t) => [t.index, [...t.probe]]));
}

describe('shipped scenarios', () => {
  it('are the five files we expect', () => {
    expect(shippedFiles).toEqual([
      'coding-help-long.yaml',
      'kavya-late-order.yaml',
      'noah-amnesia.yaml',
      'support-email-correction.yaml',
      'voice-assistant-tasks.yaml',
    ]);
  });

  it.each(shippedFiles)('%s loads and its id is its file name', (file) => {
    expect(load(file).id).toBe(basename(file, extname(file)));
  });

  it('have the hand-counted number of probes, each naming a fact stated at or before its turn', () => {
    const counts: Record<string, number> = {};
    for (const file of shippedFiles) {
      const c = load(file);
      let n = 0;
      for (const t of c.turns) {
        for (const fact of t.probe) {
          // Independent of the loader's own check: look for the statement ourselves.
          expect(c.turns.some((s) => s.index <= t.index && fact in s.facts), `${file} turn ${t.index} probes ${fact}`).toBe(true);
          n++;
        }
      }
      counts[c.id] = n;
    }
    // kavya-late-order has no probe; noah-amnesia probes name once; the others probe three facts each.
    expect(counts).toEqual({ 'coding-help-long': 3, 'kavya-late-order': 0, 'noah-amnesia': 1, 'support-email-correction': 3, 'voice-assistant-tasks': 3 });
  });

  it('state every fact value literally in its turn: the user message or a tool result', () => {
    for (const file of shippedFiles) {
      for (const t of load(file).turns) {
        const said = [t.user, ...t.tools].map((m) => normalize(m.content)).join('\n');
        for (const [fact, value] of Object.entries(t.facts)) {
          expect(said.includes(normalize(value)), `${file} turn ${t.index} ${fact}=${value}`).toBe(true);
        }
      }
    }
  });
});

describe('support-email-correction.yaml', () => {
  const c = load('support-email-correction.yaml');
  const OLD = 't.nowak@oldmail.example';
  const NEW = 'nowak.trails@brightpost.example';

  it('has 30 turns, a system prompt, a user id and no forget event', () => {
    expect(c.turns).toHaveLength(30);
    expect(c.system.map((m) => m.role)).toEqual(['system']);
    expect(c.userId).toBe('tomasz');
    expect(c.forgets).toEqual([]);
    expect(c.turns.every((t) => t.assistant !== undefined && !t.injection)).toBe(true);
  });

  it('states identity at turns 1-2, corrects the email at 5 and probes at 27, 29, 30', () => {
    expect(factTurns(c)).toEqual({
      1: { name: 'Tomasz', order_id: 'NW-58217' },
      2: { phone: '415-555-0132', email: OLD },
      5: { email: NEW },
    });
    // 27 - 5 = 22 turns between the correction and the email probe.
    expect(probeTurns(c)).toEqual({ 27: ['email'], 29: ['order_id'], 30: ['name'] });
  });

  it('has simulated gaps where the customer paused', () => {
    const gaps = Object.fromEntries(c.turns.filter((t) => t.gapSeconds !== 30).map((t) => [t.index, t.gapSeconds]));
    // 1m, 45s, 2m, 10m, 3m
    expect(gaps).toEqual({ 2: 60, 5: 45, 9: 120, 16: 600, 24: 180 });
  });

  it('makes tool calls at turns 2, 8, 12, 18, 19 and 26', () => {
    const tools = Object.fromEntries(c.turns.filter((t) => t.tools.length).map((t) => [t.index, t.tools[0]!.toolCalls!.map((x) => x.name)]));
    expect(tools).toEqual({
      2: ['get_order'],
      8: ['check_stock'],
      12: ['issue_refund'],
      18: ['check_stock'],
      19: ['lookup_account'],
      26: ['enroll_loyalty'],
    });
  });

  it('turns the turn-19 lookup_account call into one tool_calls message and one matching tool message', () => {
    const t = c.turns[18]!;
    expect(t.index).toBe(19);
    expect(t.tools).toEqual([
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'call_19_1', name: 'lookup_account', arguments: '{"phone":"415-555-0132"}' }],
        turn: 19,
      },
      {
        role: 'tool',
        content:
          '{"account_id":"CU-88412","name":"Tomasz Nowak","email":"t.nowak@oldmail.example",' +
          '"phone":"415-555-0132","email_verified":true,"crm_synced_at":"2024-05-09T18:22:04Z"}',
        toolCallId: 'call_19_1',
        turn: 19,
      },
    ]);
  });

  it('mentions only the old email between the correction and the probe, and the old one at turn 19', () => {
    // Turns 6..26 must never carry the new address, so a 10-turn window at turn 27
    // (turns 17..26) can see only the stale one from the unsynced CRM record.
    const withNew = c.turns.filter((t) => textOf(t).includes(NEW)).map((t) => t.index);
    const withOld = c.turns.filter((t) => textOf(t).includes(OLD)).map((t) => t.index);
    expect(withNew).toEqual([5, 27]);
    expect(withOld).toEqual([2, 19]);
    expect(c.turns[18]!.assistant!.content).toContain(OLD);
  });
});

describe('coding-help-long.yaml', () => {
  const c = load('coding-help-long.yaml');

  it('has 35 turns, each with a reply, a system prompt and no tools or events', () => {
    expect(c.turns).toHaveLength(35);
    expect(c.system.map((m) => m.role)).toEqual(['system']);
    expect(c.userId).toBe('priya');
    expect(c.forgets).toEqual([]);
    expect(c.turns.every((t) => t.assistant !== undefined && t.tools.length === 0 && !t.injection)).toBe(true);
  });

  it('states name, language and framework at turn 1 only and probes them at 25, 32 and 35', () => {
    expect(factTurns(c)).toEqual({ 1: { name: 'Priya', language: 'TypeScript', framework: 'Fastify' } });
    expect(probeTurns(c)).toEqual({ 25: ['framework'], 32: ['name'], 35: ['language'] });
  });

  it('keeps each probed value out of the 10 turns before its probe and out of the probing question', () => {
    for (const [turn, [fact]] of Object.entries(probeTurns(c))) {
      const p = Number(turn);
      const value = normalize(c.turns[0]!.facts[fact!]!);
      const seen = c.turns.filter((t) => t.index >= p - 10 && t.index < p && textOf(t).includes(value)).map((t) => t.index);
      expect(seen, `${fact} before turn ${p}`).toEqual([]);
      expect(normalize(c.turns[p - 1]!.user.content).includes(value)).toBe(false);
    }
  });

  it('carries long code: seven replies with a fenced block of 40 lines or more', () => {
    const longest = (s: string) => Math.max(0, ...[...s.matchAll(/```[^\n]*\n([\s\S]*?)\n```/g)].map((m) => m[1]!.split('\n').length));
    const long = c.turns.filter((t) => longest(t.assistant!.content) >= 40).map((t) => t.index);
    expect(long).toEqual([4, 6, 10, 16, 19, 21, 25]);
  });
});

describe('spec-example.yaml (the SPEC §2.1 example)', () => {
  const c = scenarioFromFile(join(FIXTURES, 'spec-example.yaml'), 'test/fixtures/spec-example.yaml');

  it('loads header fields', () => {
    expect(c.id).toBe('spec-example');
    expect(c.title).toBe('Late order, then socks');
    expect(c.system).toEqual([{ role: 'system', content: 'You are a helpful support agent for an online store.' }]);
    expect(c.userId).toBe('kavya');
  });

  it('has six turns; the forget event is not a turn and sits after turn 5', () => {
    expect(c.turns.map((t) => t.index)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(c.forgets).toEqual([{ afterTurn: 5, facts: ['email'] }]);
  });

  it('keeps facts, probe, gap, reply-less turn and injection flag', () => {
    expect(factTurns(c)).toEqual({ 1: { name: 'Kavya', order_id: 'SE-10423' }, 5: { email: 'kavya@new.example' } });
    expect(probeTurns(c)).toEqual({ 4: ['order_id'] });
    expect(c.turns.map((t) => t.gapSeconds)).toEqual([30, 45, 30, 30, 30, 30]);
    expect(c.turns.map((t) => t.injection)).toEqual([false, false, false, false, false, true]);
    expect(c.turns[4]!.assistant).toBeUndefined();
    expect(c.turns[1]!.assistant!.content).toBe('Yes: DryFit ankle socks (pack of 3) for Rs 249 and CushionRun for Rs 199.');
  });

  it('turns the add_to_cart call into a tool_calls message and its result', () => {
    expect(c.turns[2]!.tools).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_3_1', name: 'add_to_cart', arguments: '{"sku":"DRYFIT-3"}' }], turn: 3 },
      { role: 'tool', content: '{"cart_items":1}', toolCallId: 'call_3_1', turn: 3 },
    ]);
  });
});

describe('shipped scenarios under full and a 10-turn window', () => {
  // chars4 keeps this fast; which messages a turn window keeps does not depend on the tokenizer.
  const results = runStudy({
    conversations: [load('support-email-correction.yaml'), load('coding-help-long.yaml')],
    policies: policiesFromFlags(['full', 'window-turns:turns=10']),
    seed: 42,
    models: ['gpt-4o-mini'],
    tokenizer: 'chars4',
  });
  const outcomes = results.probes.map((p) => `${p.scenario} ${p.policy} ${p.turn} ${p.fact} ${p.outcome}`);

  it('retains every probe under full', () => {
    expect(outcomes.filter((o) => o.includes(' full '))).toEqual([
      'support-email-correction full 27 email retained',
      'support-email-correction full 29 order_id retained',
      'support-email-correction full 30 name retained',
      'coding-help-long full 25 framework retained',
      'coding-help-long full 32 name retained',
      'coding-help-long full 35 language retained',
    ]);
  });

  it('sends the stale email, drops the order and the coding facts, keeps the name from turn 26', () => {
    // Turn 27 window = turns 17..26: old email from the turn-19 lookup, no new one → stale.
    // Turn 29 window = 19..28: the order id was last said at turn 12 → missing.
    // Turn 30 window = 20..29: "Welcome to the Trail Club, Tomasz!" at turn 26 → retained.
    expect(outcomes.filter((o) => o.includes(' window-turns:turns=10 '))).toEqual([
      'support-email-correction window-turns:turns=10 27 email stale',
      'support-email-correction window-turns:turns=10 29 order_id missing',
      'support-email-correction window-turns:turns=10 30 name retained',
      'coding-help-long window-turns:turns=10 25 framework missing',
      'coding-help-long window-turns:turns=10 32 name missing',
      'coding-help-long window-turns:turns=10 35 language missing',
    ]);
  });
});
