import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { checkUpkeep, judgeUpkeep, memoryEntries, readUpkeepCases, simulateMemory, type UpkeepCase, type UpkeepCheck, type UpkeepCheckTotal } from '../src/study/check-upkeep.js';
import { holdsAnswer, memoryWords } from '../src/text/answers.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { capture } from './_io.js';
import { describeShared, ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * `check-upkeep` on a hand-made LoCoMo-format file whose answers are known:
 * which memory holds which answer is worked out in the comments.
 *
 * conv-t1, six questions judged (the seventh is category 3, the eighth 5):
 *
 *   answer            observations  summaries  utterances  shown (+ dates, captions)
 *   Miso              yes           yes        yes         yes
 *   2 March 2023      yes           no         no (no March) yes (the date line)
 *   Porto             yes           no         yes         yes
 *   cello             yes           yes        yes         yes
 *   Ruth              yes           yes        yes         yes
 *   two vases         no (a 2, no vases)  no (vases, no 2)  yes  yes
 *
 * conv-t2, two questions: no observations at all; the summary holds both.
 */
const TINY = join(ROOT, 'test', 'fixtures', 'check-upkeep', 'locomo-tiny.json');
const tiny = { path: TINY, file: 'locomo-tiny.json' };
const tokens = new TokenCounter('o200k_base');
const run = { tokens, seed: 42, model: 'gpt-4o-mini' };
const tmp = tempDir('ctxsim-check-upkeep-');

describe('check-upkeep on a hand-made file', () => {
  // The figures worked by hand below are against the observations alone; the dated form is checked on its own.
  const plain = { format: 'locomo', observations: 'plain' } as const;
  const cases = readUpkeepCases(tiny, { ...plain, tokens });

  it('judges categories 1, 2 and 4 by their answers, against the real memories and the dialogue', () => {
    expect(cases.map((c) => [c.id, c.answers])).toEqual([
      ['conv-t1', ['Miso', '2 March 2023', 'Porto', 'cello', 'Ruth', 'two vases']],
      ['conv-t2', ['Lyon', 'bikes']],
    ]);
    const check = checkUpkeep(tiny, plain);
    const reference = (c: (typeof check.conversations)[number] | typeof check.total) => [c.questions, c.dialogue, c.extraction.reference, c.summary.reference, c.references];
    expect(check.conversations.map(reference)).toEqual([
      [6, { text: 0.8333, shown: 1 }, 0.8333, 0.5, 0.6667],
      [2, { text: 1, shown: 1 }, 0, 1, 0],
    ]);
    // Pooled: 7 of 8 in the utterances, 5 of 8 in each real memory, which agree on 4.
    expect(reference(check.total)).toEqual([8, { text: 0.875, shown: 1 }, 0.625, 0.625, 0.5]);
    // The budgets: the observations' tokens (4 of them, counted alone), each session's summary's.
    expect(check.conversations.map((c) => [c.extraction.sheetTokens, c.summary.summaryTokens])).toEqual([
      [37, 50],
      [0, 11],
    ]);
    expect(cases.map((c) => c.budgets)).toEqual([
      { sheetTokens: 37, summaryTokens: [26, 24] },
      { sheetTokens: 0, summaryTokens: [11] },
    ]);
  });

  it('judges a simulated memory: the answers it holds, its agreement with the reference, its junk', () => {
    const sheet = ['Miso', 'Porto', 'Gonna', 'wow', 'Ben started the cello'];
    const summaries = ['Known: Miso; Ruth. Ana adopted a cat.', ''];
    const j = judgeUpkeep(cases[0]!, { sheet, summaries });
    // The sheet holds Miso, Porto, cello (3 of 6), and agrees with the observations on those and on "two vases" (both lose it).
    expect(j.extraction).toEqual({ reference: 0.8333, simulated: 0.5, agreement: 0.6667, sheetTokens: 37 });
    // The summaries hold Miso and Ruth (2 of 6): they agree with the real ones on all but cello.
    expect(j.summary).toEqual({ reference: 0.5, simulated: 0.3333, agreement: 0.8333, summaryTokens: 50 });
    // Of 8 entries (5 on the sheet; Miso, Ruth and a sentence in the summary), two are junk: "Gonna", which Ana also
    // writes in lower case, and the interjection "wow". "Porto" is written in lower case only by an image's caption.
    expect([j.entries, j.junk]).toEqual([8, 0.25]);
  });

  it('the command’s figures are the simulated memory’s, judged', () => {
    const check = checkUpkeep(tiny, plain);
    const again = cases.map((c) => judgeUpkeep(c, simulateMemory(c.dialogue, c.budgets, run)));
    expect(check.conversations).toEqual(again);
    for (const c of check.conversations) for (const x of [c.extraction.simulated, c.summary.simulated, c.junk]) expect(x >= 0 && x <= 1).toBe(true);
  });

  it('by default holds the simulation to the observations as LoCoMo stores them: each after its session’s date-time', () => {
    const [dated] = readUpkeepCases(tiny, { format: 'locomo', tokens });
    expect(dated!.reference.observations).toEqual([
      '10:00 am on 3 March, 2023. Ana adopted a cat named Miso on 2 March 2023.',
      '10:00 am on 3 March, 2023. Ana plans to visit her sister in Porto.',
      '10:00 am on 3 March, 2023. Ben started learning the cello.',
      "4:30 pm on 20 April, 2023. Ben's cello teacher is Ruth.",
    ]);
    // The sheet's budget is their size: 37 tokens without the dates, 37 + 4 × 13 with them ("10:00 am on 3 March, 2023. " and "4:30 pm on 20 April, 2023. " are 13 tokens each).
    expect(dated!.budgets.sheetTokens).toBe(89);
    expect(dated!.budgets.summaryTokens).toEqual(cases[0]!.budgets.summaryTokens);
    const a = checkUpkeep(tiny, { format: 'locomo' }).conversations[0]!;
    const b = checkUpkeep(tiny, plain).conversations[0]!;
    // The same answers held (the dates add none of them), the summaries untouched; the larger sheet holds more.
    expect([a.extraction.reference, a.summary]).toEqual([b.extraction.reference, b.summary]);
    expect(a.extraction.sheetTokens).toBe(89);
  });

  it('a memory text’s entries: its statements and list items, without labels', () => {
    expect(memoryEntries('Known facts: name: Kavya; id: SE-10423; date: 8 May, 2023')).toEqual(['Kavya', 'SE-10423', '8 May, 2023']);
    expect(memoryEntries('Summary of the conversation so far (turns 1-9). Known: Mel; Gonna. In turn 8 the user asked about pottery. Caroline attended a support group!')).toEqual([
      'Summary of the conversation so far (turns 1-9)',
      'Mel',
      'Gonna',
      'In turn 8 the user asked about pottery',
      'Caroline attended a support group',
    ]);
    expect(memoryEntries('')).toEqual([]);
  });
});

describe('the simulated memory reads the dialogue alone', () => {
  /** The file with every label changed: other questions and answers, events, and the observations moved between sessions and speakers. */
  function decoyed(path: string, name: string): string {
    const samples = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>[];
    for (const s of samples) {
      s.qa = [{ question: 'What is the decoy?', answer: 'Zanzibar quartz', evidence: ['D1:1'], category: 4 }];
      s.event_summary = { events_session_1: { date: '1 January, 1999' } };
      const observations = Object.values(s.observation as Record<string, Record<string, [string, string][]>>).flatMap((bySpeaker) => Object.values(bySpeaker).flat());
      s.observation = { session_1_observation: { Somebody: observations.reverse() } };
    }
    const out = join(tmp, name);
    writeFileSync(out, JSON.stringify(samples));
    return out;
  }

  const same = (a: UpkeepCase[], b: UpkeepCase[]) => {
    expect(b.map((c) => c.dialogue)).toEqual(a.map((c) => c.dialogue));
    expect(b.map((c) => c.budgets)).toEqual(a.map((c) => c.budgets));
    expect(b.map((c) => simulateMemory(c.dialogue, c.budgets, run))).toEqual(a.map((c) => simulateMemory(c.dialogue, c.budgets, run)));
  };

  it('on the hand-made file: no question, answer, observation or event changes it', () => {
    const a = readUpkeepCases(tiny, { format: 'locomo', tokens });
    const b = readUpkeepCases({ path: decoyed(TINY, 'tiny-decoy.json'), file: 'tiny-decoy.json' }, { format: 'locomo', tokens });
    same(a, b);
    // And what it reads holds no annotation: no facts, no probes, no question.
    for (const c of a) {
      for (const conversation of [c.dialogue.conversation, ...c.dialogue.sessions]) {
        expect(conversation.turns.every((t) => !Object.keys(t.facts).length && !t.probe.length)).toBe(true);
        expect(conversation.turns.some((t) => /\?$/.test(t.user.content) && /^(What|When|Where|Who|How)/.test(t.user.content))).toBe(false);
      }
    }
    expect(b.map((c) => c.answers)).toEqual([['Zanzibar quartz'], ['Zanzibar quartz']]);
  });

  describeShared('locomo_sample/locomo5.json', 'on the shared sample', (path) => {
    it('no question, answer, observation or event changes it', () => {
      const a = readUpkeepCases({ path, file: 'locomo5.json' }, { format: 'locomo', tokens });
      const b = readUpkeepCases({ path: decoyed(path, 'locomo5-decoy.json'), file: 'locomo5-decoy.json' }, { format: 'locomo', tokens });
      same(a.slice(0, 2), b.slice(0, 2));
    });
  });
});

describe('ctxsim check-upkeep', () => {
  it('--json prints the figures per conversation and in total, shares from 0 to 1', async () => {
    const c = capture();
    expect(await runMain(['check-upkeep', TINY, '--format', 'locomo', '--json'], c)).toBe(0);
    expect(c.stderr).toBe('');
    const json = JSON.parse(c.stdout) as { conversations: { id: string }[]; total: Record<string, unknown> };
    expect(json).toEqual(JSON.parse(JSON.stringify(checkUpkeep(tiny, { format: 'locomo' }))));
    expect(Object.keys(json)).toEqual(['conversations', 'total']);
    expect(json.conversations.map((x) => x.id)).toEqual(['conv-t1', 'conv-t2']);
    expect(Object.keys(json.total)).toEqual(['questions', 'dialogue', 'extraction', 'summary', 'references', 'junk', 'entries', 'categories']);
    // Each category's questions alone, pooled over the conversations: together they are the total.
    const categories = json.total.categories as Record<string, { questions: number; extraction: { reference: number; simulated: number; agreement: number } }>;
    expect(Object.entries(categories).map(([k, c]) => [k, c.questions])).toEqual([['1', 3], ['2', 1], ['4', 4]]);
    const total = json.total as unknown as { questions: number; extraction: Record<string, number> };
    for (const f of ['reference', 'simulated', 'agreement']) {
      const pooled = Object.values(categories).reduce((n, c) => n + c.extraction[f as 'reference'] * c.questions, 0);
      expect(pooled).toBeCloseTo(total.extraction[f]! * total.questions, 2);
    }
    expect(Object.keys(json.total.extraction as object)).toEqual(['reference', 'simulated', 'agreement']);
    expect(Object.keys(json.total.summary as object)).toEqual(['reference', 'simulated', 'agreement']);
    expect(typeof json.total.junk).toBe('number');
  });

  it('prints a table: a row per conversation, the total, and a row per category of question', async () => {
    const c = capture();
    expect(await runMain(['check-upkeep', TINY, '--format', 'locomo', '--observations', 'plain'], c)).toBe(0);
    const lines = c.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '                             dialogue         extraction                          summary                             real',
      'conversation      questions      text  shown   reference  simulated  agreement  reference  simulated  agreement  agreement  junk',
    ]);
    expect(lines.slice(2).map((l) => l.split(/\s+/).slice(0, 5))).toEqual([
      ['conv-t1', '6', '0.83', '1.00', '0.83'],
      ['conv-t2', '2', '1.00', '1.00', '0.00'],
      ['total', '8', '0.88', '1.00', '0.63'],
      // The total's extraction figures by category, worked from the rows below: reference 1 + 1 + 3 = 5 of 8 (0.63), agreement 3 + 1 + 2 = 6 of 8.
      ['', 'multi-hop', '(1)', '3', '1.00'],
      ['', 'temporal', '(2)', '1', '0.00'],
      ['', 'single-hop', '(4)', '4', '1.00'],
    ]);
    // The simulated sheet of conv-t1 holds "Ana adopted a cat named Miso on 2 March 2023" ("yesterday" resolved against
    // the session's 3 March) and the Porto statement; conv-t2's has no room. Multi-hop: Porto of Porto, two vases, bikes
    // (0.33), agreeing on all 3; temporal: 2 March 2023, as the observations; single-hop: Miso of Miso, cello, Ruth,
    // Lyon (0.25), agreeing on Miso and Lyon (0.50).
    expect(lines.slice(5).map((l) => l.split(/\s+/).slice(6, 9))).toEqual([
      ['0.33', '0.33', '1.00'],
      ['1.00', '1.00', '1.00'],
      ['0.75', '0.25', '0.50'],
    ]);
  });

  it('a file that is not one, or lacks the real memories, is one line per problem (exit 2)', async () => {
    const bad = join(tmp, 'no-memories.json');
    writeFileSync(bad, JSON.stringify([{ sample_id: 's', conversation: { speaker_a: 'A', speaker_b: 'B', session_1: [{ speaker: 'A', dia_id: 'D1:1', text: 'hi' }] } }]));
    const c = capture();
    expect(await runMain(['check-upkeep', bad, '--format', 'locomo'], c)).toBe(2);
    expect(c.stderr.replaceAll(`${tmp}/`, '')).toBe('ctxsim: no-memories.json:1:2 [0].observation: required but missing\nctxsim: no-memories.json:1:2 [0].session_summary: required but missing\n');
    expect(c.stdout).toBe('');
    expect(() => checkUpkeep(tiny, { format: 'sgd' })).toThrow('check-upkeep: format "sgd": expected one of locomo');
  });
});

describeShared('locomo_sample/locomo5.json', 'check-upkeep on five LoCoMo conversations', (path) => {
  let checked: UpkeepCheck | undefined;
  const sample = () => (checked ??= checkUpkeep({ path, file: 'locomo5.json' }, { format: 'locomo' }));

  it('reproduces the reference figures: the real memories (the observations alone) and the dialogue hold what the issue measured', () => {
    const check = checkUpkeep({ path, file: 'locomo5.json' }, { format: 'locomo', observations: 'plain' });
    const figures = check.conversations.map((c) => [c.id, c.questions, c.extraction.reference, c.summary.reference, c.dialogue.text, c.references]);
    expect(figures).toEqual([
      ['conv-26', 139, 0.4245, 0.4748, 0.6115, 0.7194],
      ['conv-30', 81, 0.321, 0.5062, 0.5432, 0.5432],
      ['conv-41', 144, 0.6042, 0.4792, 0.7639, 0.5556],
      ['conv-42', 188, 0.5479, 0.3777, 0.6702, 0.7021],
      ['conv-43', 164, 0.5915, 0.4939, 0.7744, 0.6829],
    ]);
    // The ranges: observations 0.32–0.60, summaries 0.35–0.49, the dialogue 0.52–0.76, the two real memories
    // agreeing on 0.67 (within 0.03: normalisers differ in small ways).
    const within = (xs: number[], lo: number, hi: number) => xs.every((x) => x >= lo - 0.03 && x <= hi + 0.03);
    expect(within(figures.map((f) => f[2] as number), 0.32, 0.6)).toBe(true);
    expect(within(figures.map((f) => f[3] as number), 0.35, 0.49)).toBe(true);
    expect(within(figures.map((f) => f[4] as number), 0.52, 0.76)).toBe(true);
    expect(within([check.total.references], 0.67, 0.67)).toBe(true);
    expect([check.total.questions, check.total.extraction.reference, check.total.summary.reference, check.total.dialogue, check.total.references]).toEqual([716, 0.5196, 0.4581, { text: 0.6872, shown: 0.8561 }, 0.6536]);
  });

  it('dated, the observations hold the temporal answers their sessions’ dates give, and no fewer of the others', () => {
    const dated = readUpkeepCases({ path, file: 'locomo5.json' }, { format: 'locomo', tokens });
    const plain = readUpkeepCases({ path, file: 'locomo5.json' }, { format: 'locomo', tokens, observations: 'plain' });
    // Judged against the same memory (none simulated), the reference's own share by category: dates add answers, never take one away.
    const referenceShare = (c: UpkeepCase, category: number) => {
      const words = memoryWords(c.reference.observations.join('\n'));
      return c.answers.filter((a, i) => c.categories[i] === category && holdsAnswer(words, a)).length;
    };
    const held = (cases: UpkeepCase[], category: number) => cases.reduce((n, c) => n + referenceShare(c, category), 0);
    // Temporal (2): 0.09 of 156 answers without the dates (14), 0.73 with them (114).
    expect([held(plain, 2), held(dated, 2)]).toEqual([14, 114]);
    for (const k of [1, 4]) expect(held(dated, k)).toBeGreaterThanOrEqual(held(plain, k));
    expect(sample().total.categories['2']!.extraction.reference).toBe(0.7308);
  });

  it('docs/upkeep.md shows today’s figures (run `ctxsim check-upkeep … --format locomo` and update its table when the simulation changes)', () => {
    const check = sample();
    const f = (x: number) => x.toFixed(2);
    const row = (id: string, c: UpkeepCheckTotal) =>
      `| ${id} | ${c.questions} | ${[c.dialogue.text, c.dialogue.shown, c.extraction.reference, c.extraction.simulated, c.extraction.agreement, c.summary.reference, c.summary.simulated, c.summary.agreement, c.references, c.junk].map(f).join(' | ')} |`;
    const doc = readFileSync(join(ROOT, 'docs', 'upkeep.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## How close the simulation is to a real model'));
    const shown = section.split('\n').filter((l) => /^\| (conv-|\*\*total\*\*)/.test(l));
    expect(shown).toEqual([...check.conversations.map((c) => row(c.id, c)), row('**total**', check.total)]);
  });
});
