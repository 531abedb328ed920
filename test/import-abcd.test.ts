import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ScenarioError } from '../src/errors.js';
import { actionName } from '../src/scenario/import/abcd.js';
import { importDataset } from '../src/scenario/import/index.js';
import type { Conversation } from '../src/types.js';
import { describeShared } from './_shared.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'import');
const input = { path: join(FIXTURES, 'abcd-sample.json'), file: 'abcd-sample.json', base: FIXTURES };
const dir = mkdtempSync(join(tmpdir(), 'ctxsim-abcd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each turn as [user, tool calls, assistant]. */
function shape(c: Conversation) {
  return c.turns.map((t) => [t.user.content, t.tools.flatMap((m) => (m.toolCalls ?? []).map((x) => x.name)), t.assistant?.content]);
}

describe('ABCD importer on its fixture', () => {
  const { conversations: [a, b], report } = importDataset('abcd', input);

  it('maps customer → user, agent → assistant, action → tool call with the action text as result', () => {
    expect([a!.id, b!.id]).toEqual(['abcd-501', 'abcd-502']);
    expect(a!.title).toBe('order_issue / status_delivery_time');
    expect(shape(a!)).toEqual([
      ['', [], 'Hello, how can I help?'],
      ["hi, my order hasn't shipped yet", [], "I can check. What's your full name?"],
      ['Maya Lindqvist', ['pull_up_account'], 'Thanks Maya. Could I get your username, email and order ID?'],
      ['username mlindqvist42\nemail is mlindqvist42@email.com\norder 5521907733', ['validate_purchase'], 'All verified. It ships from our Portland warehouse tomorrow.\nAnything else?'],
      ["no, that's all, thanks", [], 'Have a good one!'],
    ]);
    const [call, result] = a!.turns[3]!.tools;
    expect(call!.toolCalls![0]!.arguments).toBe('{"values":["mlindqvist42","mlindqvist42@email.com","5521907733"]}');
    expect(result).toMatchObject({ role: 'tool', content: 'Purchase validation in progress ...' });
  });

  it('takes facts from scenario values the customer types, as typed', () => {
    expect(a!.turns.map((t) => t.facts)).toEqual([{}, {}, { customer_name: 'Maya Lindqvist' }, { username: 'mlindqvist42', email: 'mlindqvist42@email.com', order_id: '5521907733' }, {}]);
    // "portland" and the state "or" are in the scenario but never typed by the customer.
    expect(b!.turns.map((t) => t.facts)).toEqual([{}, { customer_name: 'Omar Haddad' }, { zip_code: '10027' }, { phone: '(212) 555-0147' }, {}]);
  });

  it('probes a stated fact where an action uses it (delexed values or action text)', () => {
    expect(a!.turns.map((t) => t.probe)).toEqual([[], [], ['customer_name'], ['username', 'email', 'order_id'], []]);
    expect(b!.turns.map((t) => t.probe)).toEqual([[], ['customer_name'], [], ['phone'], []]);
  });

  it('names actions without delexed rows from their text, and reports what it rearranged', () => {
    expect(shape(b!).map((t) => t[1])).toEqual([[], ['pull_up_account'], [], ['enter_details', 'offer_refund'], []]);
    expect(report).toMatchObject({ conversations: 2, turns: 10, facts: 7, probes: 6 });
    expect(report.quirks.map((q) => [q.key, q.count, q.examples])).toEqual([
      ['agent-first', 1, ['501']],
      ['action-after-reply', 1, ['502']],
    ]);
    expect(actionName('System Action: search timing')).toBe('search_timing');
    expect(actionName('Something new happened here today')).toBe('something_new_happened');
    expect(actionName('whatever', 'ask-the-oracle')).toBe('ask_the_oracle');
  });

  it('rejects a malformed file whole, listing every problem', () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify([{ convo_id: 1, scenario: {}, original: [['robot', 'beep'], ['customer']] }, { convo_id: 2, scenario: {}, original: [] }]));
    let lines: string[] = [];
    try {
      importDataset('abcd', { path, file: 'bad.json', base: dir });
    } catch (e) {
      if (!(e instanceof ScenarioError)) throw e;
      lines = e.message.split('\n');
    }
    expect(lines).toEqual([
      'bad.json:1:43 [0].original[0][0]: expected one of agent|customer|action, got "robot"',
      'bad.json:1:59 [0].original[1]: expected at least 2 item(s)',
      'bad.json:1:113 [1].original: expected at least 1 item(s)',
    ]);
  });
});

describe('ABCD full-release layout', () => {
  it('reads {train, dev, test} splits in file order, with paths naming the split', () => {
    const fixture = JSON.parse(readFileSync(input.path, 'utf8')) as unknown[];
    const path = join(dir, 'splits.json');
    writeFileSync(path, JSON.stringify({ train: [fixture[1]], dev: [], test: [fixture[0]] }));
    expect(importDataset('abcd', { path, file: 'splits.json', base: dir }).conversations.map((c) => c.id)).toEqual(['abcd-502', 'abcd-501']);
    writeFileSync(path, JSON.stringify({ train: [{ convo_id: 1 }] }));
    expect(() => importDataset('abcd', { path, file: 'splits.json', base: dir })).toThrow('splits.json:1:11 train[0].scenario: required but missing\nsplits.json:1:11 train[0].original: required but missing');
  });
});

describeShared('abcd_sample/abcd_sample.json', 'ABCD importer on the official sample', (path) => {
  const { conversations, report } = importDataset('abcd', { path, file: 'abcd_sample.json', base: dirname(path) });

  it('imports the three conversations', () => {
    expect(conversations.map((c) => c.id)).toEqual(['abcd-3592', 'abcd-9489', 'abcd-3695']);
    expect(report.quirks.every((q) => q.key !== 'delexed-misaligned')).toBe(true);
  });

  it('convo 3592: 29 rows fold into 11 turns with six facts and five probes', () => {
    // Rows: 2 agent greetings open a turn with an empty user message; 10 customer runs follow.
    const c = conversations[0]!;
    expect(c.turns.length).toBe(11);
    expect(c.turns.map((t) => Object.keys(t.facts)).flat()).toEqual(['customer_name', 'username', 'email', 'order_id', 'member_level', 'phone']);
    expect(c.turns.flatMap((t) => t.probe.map((p) => `${t.index}:${p}`))).toEqual(['3:customer_name', '5:username', '5:email', '5:order_id', '9:phone']);
    expect(c.turns.flatMap((t) => t.tools.flatMap((m) => (m.toolCalls ?? []).map((x) => x.name)))).toEqual(['pull_up_account', 'validate_purchase', 'enter_details', 'notify_team']);
  });

  it('convo 3695 uses the FAQ actions and has no personal facts typed', () => {
    const c = conversations[2]!;
    expect(c.turns.flatMap((t) => t.tools.flatMap((m) => (m.toolCalls ?? []).map((x) => x.name)))).toEqual(['search_faq', 'search_timing', 'select_faq']);
    expect(c.turns.every((t) => Object.keys(t.facts).length === 0)).toBe(true);
  });
});
