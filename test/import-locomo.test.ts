import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { importDataset } from '../src/scenario/import/index.js';
import { canonicalDiaId, evidenceIds, parseLocomoDate } from '../src/scenario/import/locomo.js';
import { displayPath } from '../src/study/package.js';
import { problems } from './_io.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'import');
const fixture = join(FIXTURES, 'locomo-sample.json');
const input = { path: fixture, file: 'locomo-sample.json', base: FIXTURES };
const tmp = mkdtempSync(join(tmpdir(), 'ctxsim-locomo-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function capture() {
  const o = { out: '', err: '' };
  return { o, io: { out: (t: string) => void (o.out += t), err: (t: string) => void (o.err += t), isTTY: false } };
}

describe('LoCoMo dates and evidence ids', () => {
  it('parses "h:mm am/pm on D Month, YYYY"', () => {
    // 8 May 13:56 → 27 June 10:37: 50 days less 3 h 19 min = 4,320,000 − 11,940 s.
    expect(parseLocomoDate('10:37 am on 27 June, 2023')! - parseLocomoDate('1:56 pm on 8 May, 2023')!).toBe(4_308_060);
    expect(parseLocomoDate('12:05 am on 1 January, 2024')).toBe(Date.UTC(2024, 0, 1, 0, 5) / 1000);
    expect(parseLocomoDate('12:30 pm on 3 Sept, 2023')).toBe(Date.UTC(2023, 8, 3, 12, 30) / 1000);
    expect(parseLocomoDate('sometime in July')).toBeUndefined();
    expect(parseLocomoDate('13:00 pm on 1 May, 2023')).toBeUndefined();
  });

  it('splits several ids in one string and canonicalizes each', () => {
    expect(evidenceIds('D8:6; D9:17')).toEqual(['D8:6', 'D9:17']);
    expect(evidenceIds('D1:3')).toEqual(['D1:3']);
    expect(['D2:03', 'D:11:26', 'd4:1', 'D4', 'session 2'].map(canonicalDiaId)).toEqual(['D2:3', 'D11:26', 'D4:1', undefined, undefined]);
  });
});

describe('LoCoMo importer on its fixture', () => {
  const { conversations: [a, b], report } = importDataset('locomo', input);

  it('maps speaker_a to user and speaker_b to assistant, merging consecutive turns of one speaker', () => {
    expect([a!.id, b!.id]).toEqual(['locomo-conv-a1', 'locomo-conv-b2']);
    expect(a!.title).toBe('Ines and Tobias');
    // 6 dialogue turns (2 + 3 + 0 + 1 per session) + 7 questions; 2 + 1 for the second sample.
    expect([a!.turns.length, b!.turns.length]).toEqual([13, 3]);
    expect(a!.turns.slice(0, 6).map((t) => [t.user.content, t.assistant?.content])).toEqual([
      ['Hey Tobias! Long week. I finally signed up for the pottery course at the community centre.', 'Nice one, Ines! Which day is it on?'],
      ['Thursday evenings, starting next week.\nMy sister Lotte is joining too.', "That's great. I adopted a greyhound called Pixel on Saturday.\nHe sleeps twenty hours a day."],
      ['', 'Morning Ines! Pixel chewed my running shoes.'],
      ['Oh no! Did you get new ones?', 'Yes, the blue trail pair from Halden Sports.'],
      ['I made my first bowl at pottery, a wonky green one.', undefined],
      ['Lotte and I are going to Lisbon in August.', 'Amazing, send pictures!'],
    ]);
  });

  it('turns sessions into gaps from their date-times', () => {
    // Session 2 starts 4,308,060 s after session 1, whose second turn began 30 s in: gap 4,308,030 s.
    // Session 3 is empty; session 4's date is unreadable, so its first turn keeps the default 30 s.
    expect(a!.turns.map((t) => t.gapSeconds)).toEqual([30, 30, 4_308_030, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30]);
  });

  it('makes each evidence turn a fact (its text) and each question a final probe turn', () => {
    expect(a!.turns.map((t) => Object.keys(t.facts))).toEqual([['D1:1'], ['D1:5', 'D1:4'], ['D2:1'], ['D2:3'], ['D2:4'], ['D4:1'], [], [], [], [], [], [], []]);
    expect(a!.turns[1]!.facts['D1:5']).toBe("That's great. I adopted a greyhound called Pixel on Saturday.");
    expect(a!.turns.slice(6).map((t) => [t.user.content, t.probe, t.assistant?.content])).toEqual([
      ['What course did Ines sign up for?', ['D1:1'], 'pottery course'],
      ['When did Tobias adopt Pixel?', ['D1:5'], 'The Saturday before 8 May 2023'],
      ['Who is joining Ines at pottery and on the trip to Lisbon?', ['D1:4', 'D4:1'], 'Lotte'],
      ['What year did Ines make her first bowl?', ['D2:4'], '2023'],
      ['What did Pixel chew?', ['D2:1'], 'running shoes'],
      ["What colour is Tobias's cat?", [], undefined],
      ['Where did Tobias buy new shoes?', ['D2:3'], 'Halden Sports'],
    ]);
  });

  it('counts and reports the quirks instead of failing', () => {
    expect(report).toMatchObject({ conversations: 2, turns: 16, facts: 8, probes: 8 });
    expect(report.quirks.map((q) => [q.key, q.count, q.examples])).toEqual([
      ['assistant-first', 1, ['conv-a1 D2:1']],
      ['empty-session', 1, ['conv-a1 session_3']],
      ['bad-date', 1, ['conv-a1 session_4']],
      ['multi-id-evidence', 1, ['conv-a1 "D1:4; D4:1"']],
      ['numeric-answer', 1, ['conv-a1 qa[3]']],
      ['unresolved-evidence', 1, ['conv-a1 D9:9']],
      ['empty-evidence', 1, ['conv-a1 qa[5]']],
      ['no-answer', 1, ['conv-a1 qa[5]']],
    ]);
  });

  it('lets speaker_b play the user', () => {
    const [swapped] = importDataset('locomo', input, { user: 'speaker_b' }).conversations;
    expect(swapped!.title).toBe('Tobias and Ines');
    expect(swapped!.userId).toBe('tobias');
    expect(swapped!.turns.slice(0, 7).map((t) => t.user.content)).toEqual([
      '',
      'Nice one, Ines! Which day is it on?',
      "That's great. I adopted a greyhound called Pixel on Saturday.\nHe sleeps twenty hours a day.",
      'Morning Ines! Pixel chewed my running shoes.',
      'Yes, the blue trail pair from Halden Sports.',
      '',
      'Amazing, send pictures!',
    ]);
  });

  it('with factValue: answer, a question probes its answer where an evidence turn contains it', () => {
    const { conversations, report: r } = importDataset('locomo', input, { factValue: 'answer' });
    const c = conversations[0]!;
    expect(c.turns.map((t) => t.facts)).toEqual([
      { 'qa-1': 'pottery course' },
      { 'qa-3': 'Lotte', 'D1:5': "That's great. I adopted a greyhound called Pixel on Saturday." },
      { 'qa-5': 'running shoes' },
      { 'qa-7': 'Halden Sports' },
      { 'D2:4': 'I made my first bowl at pottery, a wonky green one.' },
      {}, {}, {}, {}, {}, {}, {}, {},
    ]);
    expect(c.turns.slice(6).map((t) => t.probe)).toEqual([['qa-1'], ['D1:5'], ['qa-3'], ['D2:4'], ['qa-5'], [], ['qa-7']]);
    expect(r.quirks.find((q) => q.key === 'answer-not-in-evidence')).toMatchObject({ count: 2, examples: ['conv-a1 qa[1]', 'conv-a1 qa[3]'] });
    expect(conversations[1]!.turns[1]!.facts).toEqual({ 'qa-1': 'The Remains of the Day' });
  });
});

describe('malformed LoCoMo data', () => {
  const write = (name: string, text: string) => {
    const p = join(tmp, name);
    writeFileSync(p, text);
    return { path: p, file: name, base: tmp };
  };

  it('lists every problem with its path, and yields no conversation', () => {
    const good = { sample_id: 'ok', conversation: { speaker_a: 'A', speaker_b: 'B', session_1: [{ speaker: 'A', dia_id: 'D1:1', text: 'hi' }] }, qa: [] };
    const bad = {
      sample_id: 'x',
      conversation: { speaker_a: 'A', speaker_b: 'B', session_1: [{ speaker: 'A', dia_id: 'D1:1', text: 5 }, { speaker: 'C', dia_id: 'D1:2', text: 'who?' }] },
      qa: [{ question: 'q', evidence: 'D1:1' }],
    };
    const f = write('bad.json', JSON.stringify([good, bad, { conversation: {} }]));
    expect(problems(() => importDataset('locomo', f))).toEqual([
      'bad.json:1:336 [1].qa[0].evidence: expected list, got string "D1:1"',
      'bad.json:1:346 [2].sample_id: required but missing',
      'bad.json:1:362 [2].conversation.speaker_a: required but missing',
      'bad.json:1:362 [2].conversation.speaker_b: required but missing',
    ]);
    const f2 = write('bad2.json', JSON.stringify([bad].map((s) => ({ ...s, qa: [] }))));
    expect(problems(() => importDataset('locomo', f2))).toEqual([
      'bad2.json:1:118 [0].conversation.session_1[0].text: expected string, got number 5 (quote it)',
    ]);
    const f3 = write('bad3.json', JSON.stringify([{ ...bad, qa: [], conversation: { ...bad.conversation, session_1: [bad.conversation.session_1[1]] } }]));
    expect(problems(() => importDataset('locomo', f3))).toEqual(['bad3.json:1:91 [0].conversation.session_1[0].speaker: expected A or B, got "C"']);
    expect(problems(() => importDataset('locomo', write('obj.json', '{"sample_id": 1}')))).toEqual(['obj.json:1:1: expected a JSON array of LoCoMo samples']);
    expect(problems(() => importDataset('locomo', write('syntax.json', '[\n  {"sample_id": 1,}\n]')))[0]).toMatch(/^syntax\.json:2:19: invalid JSON: /);
  });

  it('exits 2 from the CLI with one line per problem and writes nothing', async () => {
    const f = write('cli-bad.json', JSON.stringify([{ sample_id: 1, conversation: { speaker_a: 'A' } }]));
    const out = join(tmp, 'out');
    const c = capture();
    expect(await runMain(['import', '--format', 'locomo', f.path, '--out', out], c.io)).toBe(2);
    expect(c.o.err).toBe(`ctxsim: ${f.path}:1:32 [0].conversation.speaker_b: required but missing\n`);
    expect(c.o.out).toBe('');
    expect(existsSync(out)).toBe(false);
  });
});

describe('ctxsim import --format locomo', () => {
  it('reports counts and quirks on stderr and writes YAML to stdout', async () => {
    const c = capture();
    expect(await runMain(['import', '--format', 'locomo', fixture], c.io)).toBe(0);
    const lines = c.o.err.trimEnd().split('\n');
    expect(lines[0]).toBe(`locomo ${displayPath(fixture)}: 2 conversations, 16 turns, 8 facts, 8 probes`);
    expect(lines).toContain('  1 evidence ids that resolve to no dialogue turn (ignored) (e.g. conv-a1 D9:9)');
    expect(lines).toContain('  1 questions with an empty evidence list (no probe) (e.g. conv-a1 qa[5])');
    expect(lines).toContain('  1 evidence strings holding several ids (split) (e.g. conv-a1 "D1:4; D4:1")');
    expect(c.o.out.split('\n---\n').length).toBe(2);
    expect(c.o.out).toContain('    gap: 4308030s\n');
  });
});
