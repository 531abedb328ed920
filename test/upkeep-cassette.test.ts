/**
 * The upkeep cassette (src/upkeep/cassette.ts): request keys, the JSON Lines
 * text and its parse errors, stored vectors; and the prompts that build the
 * recorded requests (src/upkeep/prompts.ts: transcript, the request builders,
 * parseFacts) with the study's placeholder check (PROMPTS_SCHEMA).
 */
import { describe, expect, it } from 'vitest';
import { PROMPTS_SCHEMA } from '../src/recording/upkeep.js';
import type { Message } from '../src/types.js';
import { Cassette, type CassetteEntry } from '../src/upkeep/cassette.js';
import { decodeVector, encodeVector, requestKey, type ChatMessage, type UpkeepRequest } from '../src/upkeep/request.js';
import { DEFAULT_PROMPTS, extractRequest, forgetRequest, parseFacts, summaryRequest, transcript } from '../src/upkeep/prompts.js';
import { problems } from './_io.js';

const messages: ChatMessage[] = [
  { role: 'system', content: 'Summarize.' },
  { role: 'user', content: 'user: my name is Kavya' },
];
const chat: UpkeepRequest = { kind: 'summary', model: 'gpt-4o-mini', messages, maxTokens: 200 };
const embed: UpkeepRequest = { kind: 'embed', model: 'text-embedding-3-small', input: 'my name is Kavya' };

describe('requestKey', () => {
  it('is pinned: 32 hex digits of the sha256 of what the endpoint is sent', () => {
    // sha256('["chat","gpt-4o-mini",[["system","Summarize."],["user","user: my name is Kavya"]],200]')
    expect(requestKey(chat)).toBe('e8213a253138e168352154402182562d');
    // sha256('["embeddings","text-embedding-3-small","my name is Kavya"]')
    expect(requestKey(embed)).toBe('178d98cc0c7486e355ca2640625133aa');
  });

  it('is the same for a request rebuilt from equal parts', () => {
    const rebuilt: UpkeepRequest = { maxTokens: 200, messages: messages.map((m) => ({ content: `${m.content}`, role: m.role })), model: 'gpt-' + '4o-mini', kind: 'summary' };
    expect(requestKey(rebuilt)).toBe(requestKey(chat));
    expect(requestKey({ kind: 'embed', model: 'text-embedding-3-small', input: ['my', 'name', 'is', 'Kavya'].join(' ') })).toBe(requestKey(embed));
  });

  it('differs when the model, any message, max_tokens or the embedding input differs', () => {
    const keys = [
      chat,
      { ...chat, model: 'gpt-4o' },
      { ...chat, maxTokens: 201 },
      { ...chat, messages: [{ role: 'system', content: 'Summarize!' }, messages[1]!] },
      { ...chat, messages: [messages[0]!, { role: 'user', content: 'user: my name is Kavya.' }] },
      { ...chat, messages: [messages[0]!, { role: 'system', content: 'user: my name is Kavya' }] },
      { ...chat, messages: [messages[0]!] },
      embed,
      { ...embed, input: 'my name is Kavy' },
      { ...embed, model: 'text-embedding-3-large' },
    ].map((r) => requestKey(r as UpkeepRequest));
    expect(new Set(keys).size).toBe(keys.length);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{32}$/);
  });
});

const k = (c: string) => c.repeat(32);
const summary: CassetteEntry = { key: k('b'), kind: 'summary', model: 'm', text: 'Kavya, SE-10423', usage: { input: 12, output: 3 } };
const vector: CassetteEntry = { key: k('a'), kind: 'embed', model: 'e', vector: encodeVector([1, -0.5]), usage: { input: 4, output: 0 } };
const facts: CassetteEntry = { key: k('c'), kind: 'extract', model: 'm', text: 'none', usage: { input: 20, output: 1 } };

describe('Cassette text', () => {
  it('is one JSON object per line, sorted by key, fields key, kind, model, text|vector, usage', () => {
    // fields given in another order, entries out of key order
    const shuffled = { usage: { output: 3, input: 12 }, text: summary.text, model: 'm', kind: 'summary', key: summary.key } as CassetteEntry;
    const c = new Cassette([facts, shuffled, vector]);
    expect(c.text()).toBe(
      `{"key":"${k('a')}","kind":"embed","model":"e","vector":"AACAPwAAAL8=","usage":{"input":4,"output":0}}\n` +
        `{"key":"${k('b')}","kind":"summary","model":"m","text":"Kavya, SE-10423","usage":{"input":12,"output":3}}\n` +
        `{"key":"${k('c')}","kind":"extract","model":"m","text":"none","usage":{"input":20,"output":1}}\n`,
    );
    expect(c.entries().map((e) => e.key)).toEqual([k('a'), k('b'), k('c')]);
  });

  it('an empty text is kept as text (not taken for a vector)', () => {
    const empty: CassetteEntry = { ...summary, text: '' };
    expect(new Cassette([empty]).text()).toBe(`{"key":"${k('b')}","kind":"summary","model":"m","text":"","usage":{"input":12,"output":3}}\n`);
  });

  it('parse(text()) round-trips to the same text and entries', () => {
    const c = new Cassette([summary, facts, vector]);
    const back = Cassette.parse('c.jsonl', c.text());
    expect(back.text()).toBe(c.text());
    expect(back.size).toBe(3);
    expect(back.get(k('a'))).toEqual(vector);
    expect(back.get(k('b'))).toEqual(summary);
    expect(back.get(k('d'))).toBeUndefined();
  });

  it('parse reads every vector encodeVector writes, padded base64 included (8 values: 32 bytes, 44 characters with "=")', () => {
    const eight: CassetteEntry = { ...vector, vector: encodeVector([0, 2, 1, 1, 0, 0, 0, 0]) };
    expect(eight.vector).toBe('AAAAAAAAAEAAAIA/AACAPwAAAAAAAAAAAAAAAAAAAAA=');
    for (const n of [1, 2, 3, 8]) {
      const e: CassetteEntry = { ...vector, vector: encodeVector(Array.from({ length: n }, (_, i) => i + 0.5)) };
      expect(Cassette.parse('c.jsonl', new Cassette([e]).text()).get(k('a'))).toEqual(e);
    }
  });

  it('keeps the tokens read from and written to the provider’s cache, after input, only when there are some; more than the input is an error', () => {
    const cachedSummary: CassetteEntry = { ...summary, usage: { output: 3, written: 2, cached: 8, input: 12 } };
    const c = new Cassette([cachedSummary, { ...facts, usage: { input: 20, cached: 0, written: 0, output: 1 } }]);
    expect(c.text()).toBe(
      `{"key":"${k('b')}","kind":"summary","model":"m","text":"Kavya, SE-10423","usage":{"input":12,"cached":8,"written":2,"output":3}}\n` +
        `{"key":"${k('c')}","kind":"extract","model":"m","text":"none","usage":{"input":20,"output":1}}\n`,
    );
    expect(Cassette.parse('c.jsonl', c.text()).get(k('b'))).toEqual(cachedSummary);
    expect(problems(() => Cassette.parse('c.jsonl', line({ ...summary, usage: { input: 12, cached: 10, written: 3, output: 3 } })))).toEqual([
      'c.jsonl:1:1 usage.cached: cached and written tokens are part of the input tokens: together at most input, got 10',
    ]);
  });

  it('parse skips blank lines (and the last newline)', () => {
    const text = `\n${new Cassette([summary]).text()}   \n\n${new Cassette([facts]).text()}\n`;
    expect(Cassette.parse('c.jsonl', text).text()).toBe(new Cassette([summary, facts]).text());
  });

  const line = (e: Record<string, unknown>) => JSON.stringify(e);
  const ok = { key: k('a'), kind: 'summary', model: 'm', text: 't', usage: { input: 1, output: 2 } };

  it('parse errors: one problem per bad line, at file:line, naming the field and value', () => {
    const text = [
      'nope',
      '',
      line({ ...ok, usage: { input: -1, output: 2 } }),
      line({ ...ok, key: 'ABC' }),
      line({ ...ok, key: k('0').slice(1) }),
      line(ok),
      '   ',
      line({ ...ok, kind: 'extract' }),
      line({ key: k('b'), kind: 'embed', model: 'e', vector: '!!', usage: { input: 1, output: 0 } }),
      line({ ...ok, key: k('c'), usage: { input: 1.5, output: 2 } }),
      line({ key: k('d'), kind: 'embed', model: 'e', vector: 'AAAA', usage: { input: 1, output: 0 } }), // 3 bytes: not whole float32s
      line({ key: k('e'), kind: 'embed', model: 'e', vector: '', usage: { input: 1, output: 0 } }), // no values
    ].join('\n');
    expect(problems(() => Cassette.parse('c.jsonl', text))).toEqual([
      `c.jsonl:1:1: not a JSON object (Unexpected token 'o')`,
      'c.jsonl:3:1 usage.input: expected a number ≥ 0, got -1',
      'c.jsonl:4:1 key: expected 32 hex digits, got "ABC"',
      `c.jsonl:5:1 key: expected 32 hex digits, got "${k('0').slice(1)}"`,
      `c.jsonl:8:1 key: ${k('a')} is recorded twice (also on line 6)`,
      'c.jsonl:9:1 vector: expected base64 of float32 values, got "!!"',
      'c.jsonl:10:1 usage.input: expected a whole number, got number 1.5',
      'c.jsonl:11:1 vector: expected base64 of float32 values, got "AAAA"',
      'c.jsonl:12:1 vector: expected base64 of float32 values, got ""',
    ]);
  });

  it('parse errors: a line that is no JSON is not quoted (a cassette may be a link to a file of the job’s, such as .git/config)', () => {
    const config = '[core]\n\tbare = false\n[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46U0VDUkVU\n';
    const said = problems(() => Cassette.parse('c.jsonl', config));
    expect(said).toEqual([
      "c.jsonl:1:1: not a JSON object (Unexpected token 'c')",
      "c.jsonl:2:1: not a JSON object (Unexpected token 'b')",
      "c.jsonl:3:1: not a JSON object (Unexpected token 'h')",
      "c.jsonl:4:1: not a JSON object (Unexpected token 'e')",
    ]);
  });

  it("parse errors: a model's vectors of different lengths (they are compared with each other); another model's may differ", () => {
    const vec = (key: string, model: string, n: number) => line({ key: k(key), kind: 'embed', model, vector: encodeVector(Array.from({ length: n }, (_, i) => i / n)), usage: { input: 1, output: 0 } });
    const text = [vec('a', 'e', 3), vec('b', 'f', 5), vec('c', 'e', 3), vec('d', 'e', 4), vec('e', 'f', 5)].join('\n');
    expect(problems(() => Cassette.parse('c.jsonl', text))).toEqual([`c.jsonl:4:1 vector: 4 dimensions, but e's vector on line 1 has 3 (a model's vectors are compared with each other)`]);
    expect(Cassette.parse('c.jsonl', [vec('a', 'e', 3), vec('b', 'f', 5)].join('\n')).size).toBe(2);
  });

  it('parse errors: token counts past 1e9, NaN and Infinity vectors (float32 as stored: base64 of 0x7fc00000 is NaN)', () => {
    const nan = Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f]).toString('base64'); // 1, NaN
    const inf = Buffer.from([0, 0, 0x80, 0xff]).toString('base64'); // -Infinity
    const text = [
      line({ ...ok, usage: { input: 1e308, output: 2 } }),
      line({ ...ok, key: k('b'), usage: { input: 1, output: 1_000_000_001 } }),
      line({ key: k('c'), kind: 'embed', model: 'e', vector: nan, usage: { input: 1, output: 0 } }),
      line({ key: k('d'), kind: 'embed', model: 'e', vector: inf, usage: { input: 1, output: 0 } }),
      line({ ...ok, key: k('e'), usage: { input: 1_000_000_000, output: 0 } }),
    ].join('\n');
    expect(problems(() => Cassette.parse('c.jsonl', text))).toEqual([
      'c.jsonl:1:1 usage.input: expected a number ≤ 1000000000, got 1e+308',
      'c.jsonl:2:1 usage.output: expected a number ≤ 1000000000, got 1000000001',
      'c.jsonl:3:1 vector[1]: NaN as float32: every value must be a finite number',
      'c.jsonl:4:1 vector[0]: -Infinity as float32: every value must be a finite number',
    ]);
  });

  it('a journal parsed into a cassette: its responses replace the cassette’s, its vectors are checked against the cassette’s (naming the other file)', () => {
    const vec = (key: string, n: number) => ({ key: k(key), kind: 'embed' as const, model: 'e', vector: encodeVector(Array.from({ length: n }, () => 1)), usage: { input: 1, output: 0 } });
    const cassette = Cassette.parse('c.jsonl', [line(ok), line(vec('b', 3))].join('\n'));
    const journal = [line({ ...ok, text: 'newer' }), line(vec('c', 3)), line(vec('d', 4))].join('\n');
    expect(problems(() => Cassette.parse('c.jsonl.journal', journal, cassette))).toEqual([
      `c.jsonl.journal:3:1 vector: 4 dimensions, but e's vector on line 2 of c.jsonl has 3 (a model's vectors are compared with each other)`,
    ]);
    const merged = Cassette.parse('c.jsonl.journal', journal.split('\n').slice(0, 2).join('\n'), Cassette.parse('c.jsonl', [line(ok), line(vec('b', 3))].join('\n')));
    expect(merged.size).toBe(3);
    expect(merged.get(k('a'))!.text).toBe('newer');
    expect(merged.dimensionIssue(vec('e', 5))?.message).toBe(`5 dimensions, but e's vector on line 2 of c.jsonl has 3 (a model's vectors are compared with each other)`);
    expect(new Cassette([vec('b', 2)]).dimensionIssue(vec('e', 5))?.message).toBe(`5 dimensions, but e's vector in an earlier response has 2 (a model's vectors are compared with each other)`);
  });

  it('parse errors: an unknown kind, a missing usage, a non-object, an extra field', () => {
    const text = [
      line({ ...ok, kind: 'sum' }),
      line({ key: k('b'), kind: 'summary', model: 'm', text: 't' }),
      '[1]',
      line({ ...ok, key: k('c'), extra: 1 }),
      line({ ...ok, key: k('d'), kind: 'embed' }),
    ].join('\n');
    expect(problems(() => Cassette.parse('c.jsonl', text))).toEqual([
      `c.jsonl:1:1 kind: expected one of summary|extract|answer|judge|embed, got "sum"`,
      'c.jsonl:2:1 usage: required but missing',
      'c.jsonl:3:1: expected mapping, got a list',
      'c.jsonl:4:1 extra: unknown key "extra"',
      'c.jsonl:5:1 vector: required but missing',
    ]);
  });
});

describe('stored vectors', () => {
  it('encodeVector is float32 little-endian base64', () => {
    expect(encodeVector([1])).toBe('AACAPw=='); // 0x3f800000 → 00 00 80 3f
    expect(encodeVector([1, -0.5])).toBe('AACAPwAAAL8=');
    expect(encodeVector([])).toBe('');
  });

  it('decodeVector(encodeVector(v)) is v as float32 values, exactly', () => {
    const v = [0.1, -2.5, 3e-8, 0, 123456789];
    const back = decodeVector(encodeVector(v));
    expect(back).toBeInstanceOf(Float32Array);
    expect(Array.from(back)).toEqual(v.map((x) => Math.fround(x)));
    expect(back[0]).not.toBe(0.1); // float32, not the double
    expect(Array.from(decodeVector(encodeVector(Array.from(back))))).toEqual(Array.from(back));
  });
});

describe('parseFacts', () => {
  it('"none" is no facts', () => {
    expect(parseFacts('none')).toEqual([]);
    expect(parseFacts('None.')).toEqual([]);
    expect(parseFacts('')).toEqual([]);
  });

  it('reads "name: value; name: value"', () => {
    expect(parseFacts('name: Kavya; order_id: SE-10423')).toEqual([
      ['name', 'Kavya'],
      ['order_id', 'SE-10423'],
    ]);
  });

  it('reads lines, dropping bullets and numbering', () => {
    expect(parseFacts('- name: Kavya\n* city: Pune\n• zip: 411001\n1. order_id: SE-10423\n2) email: kavya@example.com\n  10. size: M')).toEqual([
      ['name', 'Kavya'],
      ['city', 'Pune'],
      ['zip', '411001'],
      ['order_id', 'SE-10423'],
      ['email', 'kavya@example.com'],
      ['size', 'M'],
    ]);
  });

  it('keeps the rest of a value with colons, drops a trailing period, trims', () => {
    expect(parseFacts('time: 10:30')).toEqual([['time', '10:30']]);
    expect(parseFacts('  city :  Pune.  ')).toEqual([['city', 'Pune']]);
    expect(parseFacts('url: http://x.example/a.')).toEqual([['url', 'http://x.example/a']]);
  });

  it('ignores lines without a colon, a colon first, and empty or "none" values', () => {
    expect(parseFacts('Here are the facts\nname: Kavya\n: orphan\nphone:\nemail: none\nThanks')).toEqual([['name', 'Kavya']]);
  });
});

describe('prompts', () => {
  const turn: Message[] = [
    { role: 'user', content: 'Where is order SE-10423?' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"id":"SE-10423"}' }] },
    { role: 'tool', name: 'lookup', toolCallId: 'c1', content: '{"status":"shipped"}' },
    { role: 'tool', toolCallId: 'c2', content: 'ok' },
    { role: 'assistant', content: 'Checking the carrier.', toolCalls: [{ id: 'c3', name: 'track', arguments: '{}' }] },
    { role: 'assistant', content: 'It shipped.' },
  ];

  it('transcript is one line per message: user, assistant, tool call, tool result', () => {
    expect(transcript(turn).split('\n')).toEqual([
      'user: Where is order SE-10423?',
      'assistant called lookup({"id":"SE-10423"})',
      'tool result (lookup): {"status":"shipped"}',
      'tool result: ok',
      'assistant: Checking the carrier.',
      'assistant called track({})',
      'assistant: It shipped.',
    ]);
    expect(transcript([])).toBe('');
  });

  it('summaryRequest: the instruction with the size, then the summary so far (when there is one) and the new messages', () => {
    const folded = turn.slice(0, 1);
    expect(summaryRequest('m', 50, undefined, folded, 'Summarize in {summaryTokens} tokens, {summaryTokens} at most.')).toEqual({
      kind: 'summary',
      model: 'm',
      messages: [
        { role: 'system', content: 'Summarize in 50 tokens, 50 at most.' },
        { role: 'user', content: 'New messages:\nuser: Where is order SE-10423?' },
      ],
      maxTokens: 50,
    });
    const r = summaryRequest('m', 50, 'Kavya waits for SE-10423.', folded, DEFAULT_PROMPTS.summary);
    expect(r.kind === 'summary' && r.messages[0]!.content).toBe(DEFAULT_PROMPTS.summary.replace('{summaryTokens}', '50'));
    expect(r.kind === 'summary' && r.messages[1]!.content).toBe('Summary so far:\nKavya waits for SE-10423.\n\nNew messages:\nuser: Where is order SE-10423?');
  });

  it('forgetRequest names the facts (never their values); extractRequest sends the prompt as is', () => {
    expect(forgetRequest('m', 80, 'Kavya, kavya@example.com', ['name', 'email'], DEFAULT_PROMPTS.forget)).toEqual({
      kind: 'summary',
      model: 'm',
      messages: [
        { role: 'system', content: 'Rewrite the summary below without these facts, which the user asked to erase: name, email. Keep everything else as it is.' },
        { role: 'user', content: 'Summary:\nKavya, kavya@example.com' },
      ],
      maxTokens: 80,
    });
    expect(extractRequest('x', turn.slice(0, 3), 64, 'Extract {summaryTokens}.')).toEqual({
      kind: 'extract',
      model: 'x',
      messages: [
        { role: 'system', content: 'Extract {summaryTokens}.' },
        { role: 'user', content: 'Messages:\nuser: Where is order SE-10423?\nassistant called lookup({"id":"SE-10423"})\ntool result (lookup): {"status":"shipped"}' },
      ],
      maxTokens: 64,
    });
  });

  /** The problems the study's `upkeep.prompts` key has, as `prompt: message`. */
  const promptProblems = (prompts: unknown) => PROMPTS_SCHEMA.optional().safeParse(prompts).error?.issues.map((i) => `${i.path.at(-1)!.toString()}: ${i.message}`) ?? [];

  it('the upkeep schema names an unknown placeholder with the allowed ones; the extract prompt takes none', () => {
    expect(promptProblems({ summary: 'Summarize in {tokens} tokens ({summaryTokens}).' })).toEqual(['summary: unknown placeholder {tokens} (this prompt may use {summaryTokens})']);
    expect(promptProblems({ forget: 'Erase {facts} from {summary}.' })).toEqual(['forget: unknown placeholder {summary} (this prompt may use {facts})']);
    expect(promptProblems({ extract: 'Extract all but {facts}.' })).toEqual(['extract: unknown placeholder {facts} (this prompt takes none)']);
  });

  it('the upkeep schema passes the allowed placeholders and no prompts', () => {
    expect(promptProblems({ summary: 'In {summaryTokens} tokens.', forget: 'Without {facts}.', extract: 'Extract facts.' })).toEqual([]);
    expect(promptProblems(DEFAULT_PROMPTS)).toEqual([]);
    expect(promptProblems(undefined)).toEqual([]);
    expect(promptProblems({})).toEqual([]);
  });
});
