import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { shapeSpans, type Span, type SpanKind } from '../src/upkeep/shapes.js';
import { ROOT, itShared } from './_shared.js';

/** The spans of a text as [kind, text] pairs, for exact comparison. */
const pairs = (text: string) => shapeSpans(text).map((s) => [s.kind, s.text]);

/** Every user and assistant text and every tool result (as sent: JSON) of the shipped scenarios. */
function scenarioTexts(): string[] {
  const out: string[] = [];
  const dir = join(ROOT, 'scenarios');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.yaml'))) {
    const doc = parse(readFileSync(join(dir, f), 'utf8')) as { turns: { user: string; assistant?: string; tools?: { result: unknown }[] }[] };
    for (const t of doc.turns) {
      out.push(t.user);
      if (t.assistant) out.push(t.assistant);
      for (const c of t.tools ?? []) out.push(JSON.stringify(c.result));
    }
  }
  return out;
}

/** Real sentences from scenarios/*.yaml with their spans, checked by hand. */
const SCENARIO_CASES: [string, [SpanKind, string][]][] = [
  ["Hi, I'm Kavya. My order SE-10423 hasn't arrived.", [['id', 'SE-10423']]],
  ['Sorry Kavya! It is out for delivery and should arrive by 8 pm.', [['time', '8 pm']]],
  [
    'Yes: DryFit ankle socks (pack of 3) for Rs 249 and CushionRun for Rs 199.',
    [['number', '3'], ['money', 'Rs 249'], ['money', 'Rs 199']],
  ],
  // Names and words are no shapes.
  ['My name is Noah.', []],
  [
    "Hi, I'm Tomasz Nowak. I ordered a rain jacket and a pair of trail shoes last week, order NW-58217, and the tracking page hasn't changed in four days.",
    [['id', 'NW-58217']],
  ],
  ['Sure, phone is 415-555-0132 and email is t.nowak@oldmail.example.', [['phone', '415-555-0132'], ['email', 't.nowak@oldmail.example']]],
  ['Take a memo. The plumber is Arjun, his number is 98450 12345.', [['phone', '98450 12345']]],
  ["Okay, I'll remind you to call the plumber tomorrow at 9 am.", [['time', '9 am']]],
  [
    "Hi! I'm Priya, working on a TypeScript service with Fastify (v4, Node 20). It\nreceives payment webhooks from our provider, Paybridge, and writes them into\nPostgres.",
    [['id', 'v4'], ['number', '20']],
  ],
  ['Found 2 errors in the same file, starting at: src/webhooks/routes.ts:11', [['number', '2'], ['url', 'src/webhooks/routes.ts:11']]],
  [
    'Done: a $47.70 refund (RF-33190) is approved and goes back to your original payment method within 5 business days.',
    [['money', '$47.70'], ['id', 'RF-33190'], ['number', '5']],
  ],
  [
    "Welcome to the Trail Club, Tomasz! You're member TC-402117, and this order already earned you 318 points, which is one $10 voucher with 68 points left over.",
    [['id', 'TC-402117'], ['number', '318'], ['money', '$10'], ['number', '68']],
  ],
  [
    'Also, I saw a 15% coupon, SPRING15, in a newsletter, but it had expired two days before I ordered. Any chance you can apply it retroactively?',
    [['number', '15%'], ['id', 'SPRING15']],
  ],
  // A tool result as the model is sent it.
  [
    '{"account_id":"CU-88412","name":"Tomasz Nowak","email":"t.nowak@oldmail.example","phone":"415-555-0132","email_verified":true,"crm_synced_at":"2024-05-09T18:22:04Z"}',
    [['id', 'CU-88412'], ['email', 't.nowak@oldmail.example'], ['phone', '415-555-0132'], ['date', '2024-05-09T18:22:04Z']],
  ],
];

describe('shapeSpans on the shipped scenarios', () => {
  const texts = scenarioTexts();

  it.each(SCENARIO_CASES)('%j', (sentence, expected) => {
    expect(texts.some((t) => t.includes(sentence))).toBe(true);
    expect(pairs(sentence)).toEqual(expected);
  });

  it('finds every stated fact value with a fixed shape (a digit or an @) in a span of the turn that states it', () => {
    const dir = join(ROOT, 'scenarios');
    let checked = 0;
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.yaml'))) {
      const doc = parse(readFileSync(join(dir, f), 'utf8')) as {
        turns: { user: string; assistant?: string; tools?: { args: unknown; result: unknown }[]; facts?: Record<string, string> }[];
      };
      for (const t of doc.turns) {
        // The user text, the tool calls and results (`T-481` is stated by a tool), the reply.
        const texts = [t.user, ...(t.tools ?? []).flatMap((c) => [JSON.stringify(c.args), JSON.stringify(c.result)]), t.assistant ?? ''];
        const spans = texts.flatMap((x) => shapeSpans(x).map((s) => s.text));
        for (const value of Object.values(t.facts ?? {}).map(String).filter((v) => /[\d@]/.test(v))) {
          expect(spans.some((s) => s.includes(String(value))), `${f}: ${value} in ${JSON.stringify(spans)}`).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(6);
  });
});

describe('shapeSpans rules', () => {
  it('takes no names, pronouns nor words: only fixed shapes', () => {
    expect(pairs("Hi, I'm Kavya Sharma and I live in New York. The order is late. Yes, it is. Sorry Noah!")).toEqual([]);
  });

  it('reads a phone number whole with groups of up to six digits (a UK mobile), and a country code', () => {
    expect(pairs('Oops, my number is actually +44 7700 934185, and the old one was +49 151 9876 7005.')).toEqual([
      ['phone', '+44 7700 934185'],
      ['phone', '+49 151 9876 7005'],
    ]);
  });

  it('keeps one span per occurrence, in order, without trailing punctuation', () => {
    expect(pairs('my number is 415-555-0132. Again: 415-555-0132! and t.nowak@oldmail.example, or see (https://example.com/a?b=1).')).toEqual([
      ['phone', '415-555-0132'],
      ['phone', '415-555-0132'],
      ['email', 't.nowak@oldmail.example'],
      ['url', 'https://example.com/a?b=1'],
    ]);
  });

  it('reads dates, times, money and numbers whole', () => {
    expect(pairs('Fly on May 10, 2024 at 10:30 am, or 2025-03-12T09:00; pay $1,250.50 or INR 500, 2-3 days, 3e-06, 5000ms.')).toEqual([
      ['date', 'May 10, 2024'],
      ['time', '10:30 am'],
      ['date', '2025-03-12T09:00'],
      ['money', '$1,250.50'],
      ['money', 'INR 500'],
      ['number', '2-3'],
      ['number', '3e-06'],
      ['number', '5000ms'],
    ]);
  });

  it('reads codes, identifiers and paths in tool output; a technology name with a dotted suffix is no file name', () => {
    expect(pairs('RangeError [ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH] at verifySignature (src/webhooks/verify.ts:46:30) on Node.js')).toEqual([
      ['id', 'ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH'],
      ['url', 'src/webhooks/verify.ts:46:30'],
    ]);
    expect(pairs('{"member_id":"TC-402117","points":318,"vouchers":1}')).toEqual([
      ['id', 'TC-402117'],
      ['number', '318'],
      ['number', '1'],
    ]);
  });

});

describe('shapeSpans on the shared dialogue and agent samples', () => {
  itShared('abcd_sample/abcd_sample.json', 'ABCD: customer turns', (path) => {
    const rows = (JSON.parse(readFileSync(path, 'utf8')) as { original: [string, string][] }[]).flatMap((c) => c.original.map(([, t]) => t));
    const cases: [string, [SpanKind, string][]][] = [
      ['Crystal Minh', []],
      ['Username: cminh730', [['id', 'cminh730']]],
      ['cminh730@email.com', [['email', 'cminh730@email.com']]],
      ['Order ID: 3348917502', [['number', '3348917502']]],
    ];
    for (const [text, expected] of cases) {
      expect(rows).toContain(text);
      expect(pairs(text)).toEqual(expected);
    }
  });

  itShared('multiwoz21_convlab_sample/dummy_data.json', 'MultiWOZ: a train booking', (path) => {
    const utterances = (JSON.parse(readFileSync(path, 'utf8')) as { turns: { utterance: string }[] }[]).flatMap((d) => d.turns.map((t) => t.utterance));
    const cases: [string, [SpanKind, string][]][] = [
      ["I'm looking for Wednesday , arrive by 11:30 for 8 people Please.", [['time', '11:30'], ['number', '8']]],
      [
        'Booking was successful, the total fee is 35.2 GBP payable at the station. You reference number is 7ZCVR4Q3. Can I help you with anything else?',
        [['money', '35.2 GBP'], ['id', '7ZCVR4Q3']],
      ],
    ];
    for (const [text, expected] of cases) {
      expect(utterances).toContain(text);
      expect(pairs(text)).toEqual(expected);
    }
  });

  itShared('sgd_sample/dialogues_001_first10.json', 'SGD: restaurants', (path) => {
    const utterances = (JSON.parse(readFileSync(path, 'utf8')) as { turns: { utterance: string }[] }[]).flatMap((d) => d.turns.map((t) => t.utterance));
    const cases: [string, [SpanKind, string][]][] = [
      ['If you want to go to this restaurant you can find it at 71 North San Pedro Street.', [['number', '71']]],
      [
        'Please confirm: Booking a table for 2 at Isla Restaurant in San Bruno. It is on March 12th at 6 pm.',
        [['number', '2'], ['date', 'March 12th'], ['time', '6 pm']],
      ],
    ];
    for (const [text, expected] of cases) {
      expect(utterances).toContain(text);
      expect(pairs(text)).toEqual(expected);
    }
  });

  itShared('agent_transcripts_sample/swe-agent_fc-demo_marshmallow-1867.traj', 'SWE-agent: a directory listing', (path) => {
    const first = (JSON.parse(readFileSync(path, 'utf8')) as { trajectory: { observation: string }[] }).trajectory[0]!.observation;
    const line = first.split('\r\n')[0]!;
    expect(line).toBe('AUTHORS.rst\t    LICENSE\t RELEASING.md\t      performance/    src/');
    expect(pairs(line)).toEqual([
      ['url', 'AUTHORS.rst'],
      ['url', 'RELEASING.md'],
    ]);
  });

  itShared('agent_transcripts_sample/mini-swe-agent_deepseek-chat_django-15213.traj.json', 'mini-swe-agent: every span of a whole run is an exact substring, in order', (path) => {
    const messages = (JSON.parse(readFileSync(path, 'utf8')) as { messages: { content: unknown }[] }).messages;
    const text = messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
    const spans = shapeSpans(text);
    expect(spans.length).toBeGreaterThan(500);
    expectInOrder(text, spans);
    expect(spans.filter((s) => s.kind === 'url').map((s) => s.text)).toContain('/testbed/django/db/models/expressions.py');
  });
});

/** Each span's text occurs in `text` after the previous one's, is not empty and ends in no punctuation. */
function expectInOrder(text: string, spans: readonly Span[]): void {
  let at = 0;
  for (const s of spans) {
    expect(s.text.length).toBeGreaterThan(0);
    expect(s.text).not.toMatch(/[.,;:!?]$/);
    const i = text.indexOf(s.text, at);
    expect(i, JSON.stringify(s)).toBeGreaterThanOrEqual(0);
    at = i + s.text.length;
  }
}

describe('shapeSpans is deterministic', () => {
  it('gives the same spans for the same text, alone or after other texts', () => {
    const text = SCENARIO_CASES.map(([x]) => x).join('\n');
    const first = shapeSpans(text);
    for (let i = 0; i < 100; i++) shapeSpans(`Order SE-${i} at ${i % 12} pm, ${i}.`);
    expect(shapeSpans(text)).toEqual(first);
    expect(first.length).toBeGreaterThan(20);
  });
});

describe('shapeSpans on any text', () => {
  const fragments = [
    'Kavya', 'Sharma', 'New York', 'the', 'The', 'Sorry', 'I', "I'm", 'order', 'SE-10423', 'T-481', 'ERR_SIGNATURE_MISMATCH', '415-555-0132', '98450 12345',
    't.nowak@oldmail.example', 'https://example.com/a?b=(1)', 'src/a.ts:3', '8 pm', 'Rs 249', '$1,250.50', 'May 10, 2024', '2024-05-10T16:41:00Z', '3e-06',
    '{"a":1}', '[', ')', '"', "'", '.', ',', ':', '!', '?', '-', '_', '/', '@', '#', '$', '%', 'é', '😀', '\u00a0', '\t', '\r\n', '\n', ' ', '  ',
  ];
  const texts = fc.oneof(
    fc.array(fc.constantFrom(...fragments), { maxLength: 40 }).map((xs) => xs.join('')),
    fc.array(fc.constantFrom(...fragments), { maxLength: 40 }).map((xs) => xs.join(' ')),
    fc.string({ maxLength: 200, unit: 'binary' }),
  );

  it('returns spans that are exact substrings, in order, with no trailing punctuation (fixed seed)', () => {
    fc.assert(
      fc.property(texts, (text) => {
        expectInOrder(text, shapeSpans(text));
      }),
      { seed: 20261202, numRuns: 300 },
    );
  });

  it('handles 200 kB of code and JSON on one line, and long runs without whitespace, in linear time', () => {
    const record = (i: number) => ({ id: `SE-${10000 + i}`, name: `Item ${i}`, owner: 'Kavya Sharma', price: i * 1.5, at: '2024-05-10T16:41:00Z', url: `https://example.com/items/${i}` });
    const json = JSON.stringify(Array.from({ length: 2000 }, (_, i) => record(i)));
    const code = "const header = request.headers['paybridge-signature'] as string; if (expected !== v1) return reply.code(401); ";
    const blob = (json + code.repeat(Math.ceil(200_000 / code.length))).slice(0, 200_000);
    const started = performance.now();
    const spans = shapeSpans(blob);
    for (const run of ['http://'.repeat(30_000), 'a/'.repeat(100_000), 'A_'.repeat(100_000), '12 '.repeat(60_000)]) shapeSpans(run);
    expect(performance.now() - started).toBeLessThan(20_000);
    expectInOrder(blob, spans);
    expect(spans.filter((s) => s.kind === 'id').length).toBeGreaterThan(1000);
  });
});
