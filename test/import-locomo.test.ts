import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { importDataset } from '../src/scenario/import/index.js';
import { normalizeText } from '../src/scenario/docs.js';
import { canonicalDiaId, evidenceIds, parseLocomoDate, readLocomo } from '../src/scenario/import/locomo.js';
import type { Conversation } from '../src/types.js';
import { displayPath } from '../src/output/display.js';
import { problems } from './_io.js';
import { itShared } from './_shared.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'import');
const fixture = join(FIXTURES, 'locomo-sample.json');
const input = { path: fixture, file: 'locomo-sample.json', base: FIXTURES };
const tmp = mkdtempSync(join(tmpdir(), 'ctxsim-locomo-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Writes a dataset (text, or a value as JSON) into the temp folder; returns it as an importer's input. */
function write(name: string, content: string | unknown[]) {
  const p = join(tmp, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return { path: p, file: name, base: tmp };
}

function capture() {
  const o = { out: '', err: '' };
  return { o, io: { out: (t: string) => void (o.out += t), err: (t: string) => void (o.err += t), isTTY: false } };
}

itShared('locomo_sample/locomo5.json', "a speaker's name OpenAI's chat API refuses as a message name (José María) is kept, and the import says so", (path) => {
  const text = readFileSync(path, 'utf8').replaceAll('"Caroline"', '"José María"');
  const { conversations, report } = importDataset('locomo', write('jose.json', text));
  expect(conversations[0]!.turns[0]!.user.name).toBe('José María');
  expect(report.quirks.find((q) => q.key === 'openai-name')).toEqual({
    key: 'openai-name',
    label: "names OpenAI's chat API refuses (only letters, digits, _ and -: kept as written; under the openai rules they are the scenario's, not counted against a policy)",
    count: 1,
    examples: ['locomo-conv-26 "José María"'],
  });
});

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

/** A conversation's turns without their annotations: what a model is shown. */
const shown = (c: Conversation) => c.turns.map((t) => [t.user.content, t.assistant?.content]);

describe('LoCoMo importer on its fixture', () => {
  const { conversations, report } = importDataset('locomo', input, { questions: 'each' });
  const a = conversations[0]!;

  it('asks each question alone after the whole dialogue: one scenario per question with something to probe', () => {
    // conv-a1: 7 questions, the sixth with no evidence (no scenario); conv-b2: 1.
    expect(conversations.map((c) => c.id)).toEqual(['a1-q001', 'a1-q002', 'a1-q003', 'a1-q004', 'a1-q005', 'a1-q007', 'b2-q001'].map((q) => `locomo-conv-${q}`));
    expect(a.title).toBe('Ines and Tobias, question 1');
    // 6 dialogue turns (2 + 3 + 0 + 1 per session) and the question; 2 + 1 for the second sample.
    expect(conversations.map((c) => c.turns.length)).toEqual([7, 7, 7, 7, 7, 7, 3]);
    const dialogue = shown(a).slice(0, 6);
    for (const c of conversations.slice(0, 6)) expect(shown(c).slice(0, 6)).toEqual(dialogue);
    expect(conversations.map((c) => [c.turns.at(-1)!.user.content, c.turns.at(-1)!.assistant, c.turns.at(-1)!.probe])).toEqual([
      ['What course did Ines sign up for?', undefined, ['D1:1']],
      ['When did Tobias adopt Pixel?', undefined, ['D1:5']],
      ['Who is joining Ines at pottery and on the trip to Lisbon?', undefined, ['D1:4', 'D4:1']],
      ['What year did Ines make her first bowl?', undefined, ['D2:4']],
      ['What did Pixel chew?', undefined, ['D2:1']],
      ['Where did Tobias buy new shoes?', undefined, ['D2:3']],
      ['Which book did Malik pick first?', undefined, ['D1:3']],
    ]);
  });

  it('writes each session’s date as its first line, an image as its caption, and names each message by its speaker', () => {
    expect(shown(a).slice(0, 6)).toEqual([
      ['DATE: 1:56 pm on 8 May, 2023\nHey Tobias! Long week. I finally signed up for the pottery course at the community centre.', 'Nice one, Ines! Which day is it on?'],
      [
        'Thursday evenings, starting next week.\nMy sister Lotte is joining too.',
        "That's great. I adopted a greyhound called Pixel on Saturday.\n[shares a photo of a grey dog on a sofa]\nHe sleeps twenty hours a day.",
      ],
      ['DATE: 10:37 am on 27 June, 2023', 'Morning Ines! Pixel chewed my running shoes.'],
      ['Oh no! Did you get new ones?', 'Yes, the blue trail pair from Halden Sports.'],
      ['I made my first bowl at pottery, a wonky green one.', undefined],
      // An unreadable date-time is still what the conversation says.
      ['DATE: sometime in July\nLotte and I are going to Lisbon in August.', 'Amazing, send pictures!'],
    ]);
    // The date line alone is no one's message: a session Tobias opens has no name on its user message.
    expect(a.turns.slice(0, 7).map((t) => [t.user.name, t.assistant?.name])).toEqual([
      ['Ines', 'Tobias'],
      ['Ines', 'Tobias'],
      [undefined, 'Tobias'],
      ['Ines', 'Tobias'],
      ['Ines', undefined],
      ['Ines', 'Tobias'],
      [undefined, undefined],
    ]);
  });

  it('turns sessions into gaps from their date-times', () => {
    // Session 2 starts 4,308,060 s after session 1, whose second turn began 30 s in: gap 4,308,030 s.
    // Session 3 is empty; session 4's date is unreadable, so its first turn keeps the default 30 s.
    expect(a.turns.map((t) => t.gapSeconds)).toEqual([30, 30, 4_308_030, 30, 30, 30, 30]);
  });

  it('states only its question’s evidence as facts (each turn’s text), and never a reply to the question', () => {
    expect(conversations.map((c) => c.turns.map((t) => Object.keys(t.facts)).flat())).toEqual([['D1:1'], ['D1:5'], ['D1:4', 'D4:1'], ['D2:4'], ['D2:1'], ['D2:3'], ['D1:3']]);
    expect(conversations[1]!.turns[1]!.facts['D1:5']).toBe("That's great. I adopted a greyhound called Pixel on Saturday.");
  });

  it('with questions: after, asks every question after one dialogue, none with a reply', () => {
    const { conversations: [c, b], report: r } = importDataset('locomo', input, { questions: 'after' });
    expect([c!.id, b!.id]).toEqual(['locomo-conv-a1', 'locomo-conv-b2']);
    expect(c!.title).toBe('Ines and Tobias');
    expect(shown(c!).slice(0, 6)).toEqual(shown(a).slice(0, 6));
    expect(c!.turns.map((t) => Object.keys(t.facts))).toEqual([['D1:1'], ['D1:5', 'D1:4'], ['D2:1'], ['D2:3'], ['D2:4'], ['D4:1'], [], [], [], [], [], [], []]);
    expect(c!.turns.slice(6).map((t) => [t.user.content, t.probe, t.assistant])).toEqual([
      ['What course did Ines sign up for?', ['D1:1'], undefined],
      ['When did Tobias adopt Pixel?', ['D1:5'], undefined],
      ['Who is joining Ines at pottery and on the trip to Lisbon?', ['D1:4', 'D4:1'], undefined],
      ['What year did Ines make her first bowl?', ['D2:4'], undefined],
      ['What did Pixel chew?', ['D2:1'], undefined],
      ["What colour is Tobias's cat?", [], undefined],
      ['Where did Tobias buy new shoes?', ['D2:3'], undefined],
    ]);
    expect(r).toMatchObject({ conversations: 2, turns: 16, facts: 8, probes: 8 });
    expect(r.quirks.find((q) => q.key === 'empty-evidence')!.label).toBe('questions with an empty evidence list (no probe)');
  });

  it('counts and reports the quirks instead of failing', () => {
    expect(report).toMatchObject({ conversations: 7, turns: 45, facts: 8, probes: 8 });
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
    expect(report.quirks.find((q) => q.key === 'empty-evidence')!.label).toBe('questions with an empty evidence list (no scenario)');
  });

  it('lets speaker_b play the user', () => {
    const [swapped] = importDataset('locomo', input, { user: 'speaker_b', questions: 'each' }).conversations;
    expect(swapped!.title).toBe('Tobias and Ines, question 1');
    expect(swapped!.userId).toBe('tobias');
    expect(swapped!.turns.slice(0, 7).map((t) => [t.user.content, t.user.name])).toEqual([
      ['DATE: 1:56 pm on 8 May, 2023', undefined],
      ['Nice one, Ines! Which day is it on?', 'Tobias'],
      ["That's great. I adopted a greyhound called Pixel on Saturday.\n[shares a photo of a grey dog on a sofa]\nHe sleeps twenty hours a day.", 'Tobias'],
      ['DATE: 10:37 am on 27 June, 2023\nMorning Ines! Pixel chewed my running shoes.', 'Tobias'],
      ['Yes, the blue trail pair from Halden Sports.', 'Tobias'],
      ['DATE: sometime in July', undefined],
      ['Amazing, send pictures!', 'Tobias'],
    ]);
  });

  it('with factValue: answer, a question probes its answer where an evidence turn contains it', () => {
    const { conversations: cs, report: r } = importDataset('locomo', input, { factValue: 'answer', questions: 'each' });
    expect(cs.map((c) => c.turns.flatMap((t) => Object.entries(t.facts)))).toEqual([
      [['qa-1', 'pottery course']],
      [['D1:5', "That's great. I adopted a greyhound called Pixel on Saturday."]],
      [['qa-3', 'Lotte']],
      [['D2:4', 'I made my first bowl at pottery, a wonky green one.']],
      [['qa-5', 'running shoes']],
      [['qa-7', 'Halden Sports']],
      [['qa-1', 'The Remains of the Day']],
    ]);
    expect(cs.map((c) => c.turns.at(-1)!.probe)).toEqual([['qa-1'], ['D1:5'], ['qa-3'], ['D2:4'], ['qa-5'], ['qa-7'], ['qa-1']]);
    expect(r.quirks.find((q) => q.key === 'answer-not-in-evidence')).toMatchObject({ count: 2, examples: ['conv-a1 qa[1]', 'conv-a1 qa[3]'] });
  });

  it('with factValue: answer, a question that states its own answer probes its evidence', () => {
    const f = write('self-answer.json', [{ sample_id: 's', conversation: { speaker_a: 'A', speaker_b: 'B', session_1_date_time: '9:00 am on 1 May, 2023', session_1: [{ speaker: 'A', dia_id: 'D1:1', text: 'I went to the beach.' }] }, qa: [{ question: 'Did A go to the beach?', answer: 'beach', evidence: ['D1:1'] }] }]);
    const { conversations: [c], report: r } = importDataset('locomo', f, { factValue: 'answer', questions: 'each' });
    expect(c!.turns[0]!.facts).toEqual({ 'D1:1': 'I went to the beach.' });
    expect(r.quirks.map((q) => [q.key, q.examples])).toEqual([['answer-in-question', ['s qa[0]']]]);
  });

  it('a sample with no question to probe is its dialogue alone', () => {
    const f = write('no-qa.json', [{ sample_id: 7, conversation: { speaker_a: 'A', speaker_b: 'B', session_1_date_time: '9:00 am on 1 May, 2023', session_1: [{ speaker: 'A', dia_id: 'D1:1', text: 'hi' }, { speaker: 'B', dia_id: 'D1:2', text: 'hello' }] } }]);
    const { conversations: [c], report: r } = importDataset('locomo', f, { questions: 'each' });
    expect([c!.id, shown(c!)]).toEqual(['locomo-7', [['DATE: 9:00 am on 1 May, 2023\nhi', 'hello']]]);
    expect(r.quirks.map((q) => [q.key, q.label])).toEqual([['no-question', 'samples with no question to probe (the dialogue alone)']]);
  });

  it('reads the real model’s memories of a sample when asked: observations and summaries by session', () => {
    const { samples } = readLocomo(input, { user: 'speaker_a' }, { memories: true });
    expect(samples.map((s) => [s.id, s.sessions.map((x) => [x.n, x.first, x.last])])).toEqual([
      ['conv-a1', [[1, 1, 2], [2, 3, 5], [4, 6, 6]]],
      ['conv-b2', [[1, 1, 2]]],
    ]);
    expect(samples[0]!.memories).toEqual({
      observations: new Map([[1, ['Ines signed up for a pottery course.', 'Tobias adopted Pixel.']]]),
      summaries: new Map([[1, 'Ines and Tobias catch up about a pottery course and a new dog.']]),
    });
    expect(readLocomo(input, { user: 'speaker_a' }).samples[0]!.memories).toBeUndefined();
    const f = write('no-memories.json', [{ sample_id: 's', conversation: { speaker_a: 'A', speaker_b: 'B', session_1: [{ speaker: 'A', dia_id: 'D1:1', text: 'hi' }] } }]);
    expect(problems(() => readLocomo(f, { user: 'speaker_a' }, { memories: true }))).toEqual([
      'no-memories.json:1:2 [0].observation: required but missing',
      'no-memories.json:1:2 [0].session_summary: required but missing',
    ]);
  });
});

/** By sample id: every answer of its questions that its dialogue (texts, captions, dates) does not state. */
function answersNotStated(path: string): Map<string, { answer: string; question: string }[]> {
  const samples = JSON.parse(readFileSync(path, 'utf8')) as { sample_id: string; conversation: Record<string, unknown>; qa?: { question: string; answer?: unknown; adversarial_answer?: unknown }[] }[];
  const bySample = new Map<string, { answer: string; question: string }[]>();
  for (const s of samples) {
    const out: { answer: string; question: string }[] = [];
    bySample.set(s.sample_id, out);
    const dialogue = normalizeText(
      Object.entries(s.conversation)
        .flatMap(([k, v]) => (/^session_\d+$/.test(k) ? (v as { text: string; blip_caption?: string }[]).flatMap((u) => [u.text, u.blip_caption ?? '']) : /_date_time$/.test(k) ? [String(v)] : []))
        .join('\n'),
    );
    for (const q of s.qa ?? []) {
      for (const a of [q.answer, q.adversarial_answer]) {
        const answer = a === undefined ? '' : normalizeText(String(a));
        if (answer && !dialogue.includes(answer)) out.push({ answer, question: q.question });
      }
    }
  }
  return bySample;
}

/** The messages of a conversation, normalized, one text each. */
const messageTexts = (c: Conversation) => c.turns.flatMap((t) => [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])]).map((m) => normalizeText(m.content));

describe('no answer in the conversation', () => {
  const check = (path: string, file: string) => {
    const bySample = answersNotStated(path);
    const keyOf = (c: Conversation) => [...bySample].find(([id]) => c.id === `locomo-${id}` || c.id.startsWith(`locomo-${id}-q`))![1];
    type Key = ReturnType<typeof keyOf>;
    const key = [...bySample.values()].flat();
    const each = importDataset('locomo', { path, file, base: dirname(path) }, { questions: 'each' }).conversations;
    const after = importDataset('locomo', { path, file, base: dirname(path) }, { questions: 'after' }).conversations;
    // Each question alone: the dialogue is the same in every scenario of a sample, and only the question's own words may
    // hold an answer the dialogue does not.
    const dialogues = new Map<Key, string>();
    for (const c of each) {
      const key = keyOf(c);
      const texts = messageTexts(c);
      const dialogue = texts.slice(0, -1).join('\n');
      const first = dialogues.get(key);
      if (first === undefined) {
        dialogues.set(key, dialogue);
        expect(key.filter((k) => dialogue.includes(k.answer)).map((k) => `${c.id}: ${k.answer}`)).toEqual([]);
      } else expect(dialogue === first, c.id).toBe(true);
      const last = c.turns.at(-1)!;
      expect([last.assistant, last.tools.length], c.id).toEqual([undefined, 0]);
      expect(texts.at(-1)).toBe(normalizeText(last.user.content));
    }
    // Every question after one dialogue: the questions may hold each other's answers, never a reply does.
    for (const c of after) {
      const questions = c.turns.filter((t) => t.probe.length || !t.assistant).map((t) => normalizeText(t.user.content));
      expect(c.turns.filter((t) => questions.includes(normalizeText(t.user.content)) && t.assistant && t.index > c.turns.length - questions.length)).toEqual([]);
      expect(keyOf(c).filter((k) => !questions.some((q) => q.includes(k.answer)) && messageTexts(c).some((t) => t.includes(k.answer))).map((k) => `${c.id}: ${k.answer}`)).toEqual([]);
    }
    return { key, each, after };
  };

  it('on the fixture', () => {
    const { key, each } = check(fixture, 'locomo-sample.json');
    // The answers the dialogue does not state, which the importer used to send as replies.
    expect(key.map((k) => k.answer)).toEqual(['the saturday before 8 may 2023', 'black']);
    expect(each.length).toBe(7);
  });

  itShared('locomo_sample/locomo5.json', 'on the shared sample (five LoCoMo conversations)', (path) => {
    const { key, each, after } = check(path, 'locomo5.json');
    // 997 of the 1,001 questions have evidence to probe; 576 of their answers are not written as the dialogue writes them.
    expect([each.length, after.length, key.length]).toEqual([997, 5, 576]);
    // Every image is shown by its caption, every session opened by its date.
    const conv26 = after[0]!;
    expect(conv26.turns.filter((t) => t.user.content.startsWith('DATE: ')).length).toBe(19);
    expect(conv26.turns[2]!.user.content).toBe('The transgender stories were so inspiring! I was so happy and thankful for all the support.\n[shares a photo of a dog walking past a wall with a painting of a woman]');
    // conv-26 shares 116 images.
    const lines = conv26.turns.flatMap((t) => [t.user, ...(t.assistant ? [t.assistant] : [])]).flatMap((m) => m.content.split('\n'));
    expect(lines.filter((l) => l.startsWith('[shares ')).length).toBe(116);
  });
});

describe('malformed LoCoMo data', () => {
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
    expect(await runMain(['import', '--format', 'locomo', fixture, '--questions', 'each'], c.io)).toBe(0);
    const lines = c.o.err.trimEnd().split('\n');
    expect(lines[0]).toBe(`locomo ${displayPath(fixture)}: 7 conversations, 45 turns, 8 facts, 8 probes`);
    expect(lines).toContain('  1 evidence ids that resolve to no dialogue turn (ignored) (e.g. conv-a1 D9:9)');
    expect(lines).toContain('  1 questions with an empty evidence list (no scenario) (e.g. conv-a1 qa[5])');
    expect(lines).toContain('  1 evidence strings holding several ids (split) (e.g. conv-a1 "D1:4; D4:1")');
    expect(c.o.out.split('\n---\n').length).toBe(7);
    expect(c.o.out).toContain('    gap: 4308030s\n');
  });
});
