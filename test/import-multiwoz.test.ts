import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import { describeShared } from './_shared.js';
import { tempDir } from './_tmp.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'import');
const input = { path: join(FIXTURES, 'multiwoz-sample.json'), file: 'multiwoz-sample.json', base: FIXTURES };

describe('MultiWOZ dialogue ids as scenario ids', () => {
  it('gives ids that differ only in letters of other scripts different ids, with a hash of the id', () => {
    const dir = tempDir('ctxsim-multiwoz-');
    const path = join(dir, 'accents.json');
    const turns = [{ speaker: 'user', utterance: 'Hi.' }];
    writeFileSync(path, JSON.stringify(['Ä1', 'Ö1', 'SNG1'].map((original_id, k) => ({ dialogue_id: `d-${k}`, original_id, turns }))));
    // The hash: the first 8 hex digits of the id's SHA-256; a plain ASCII id has none.
    const hash = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 8);
    expect(importDataset('multiwoz', { path, file: 'accents.json', base: dir }).docs.map((d) => d.id)).toEqual([`multiwoz-a1-${hash('Ä1')}`, `multiwoz-o1-${hash('Ö1')}`, 'multiwoz-sng1']);
  });
});

describe('MultiWOZ (ConvLab unified format) importer on its fixture', () => {
  const { docs, conversations: [a, b], report } = importDataset('multiwoz', input);

  it('maps user/system to user/assistant, one turn per exchange, plus a final question', () => {
    expect([a!.id, b!.id]).toEqual(['multiwoz-sng09001', 'multiwoz-mul09002']);
    expect([a!.title, b!.title]).toEqual(['MultiWOZ: hotel', 'MultiWOZ: train, restaurant']);
    expect(a!.turns.map((t) => [t.user.content, t.assistant?.content])).toEqual([
      ['I need a cheap hotel in the north for 2 nights from friday.', 'The Lindholm Guesthouse fits. Shall I book it?'],
      ['Yes please, for 3 people.', 'Booked! Your reference number is QX4T9PLM. Anything else?'],
      ['No thanks, goodbye.', 'Goodbye!'],
      ['Before I go, could you repeat my hotel booking reference?', 'Your hotel reference is QX4T9PLM.'],
    ]);
  });

  it('makes each booking reference a fact as written, probed by the final question', () => {
    expect(a!.turns.map((t) => t.facts)).toEqual([{}, { hotel_ref: 'QX4T9PLM' }, {}, {}]);
    expect(b!.turns.map((t) => t.facts)).toEqual([{ train_ref: 'TR55AB12' }, {}, { restaurant_ref: 'k2m8zz01' }, {}]);
    expect(b!.turns.map((t) => t.probe)).toEqual([[], [], [], ['train_ref', 'restaurant_ref']]);
    expect(report).toMatchObject({ conversations: 2, turns: 8, facts: 3, probes: 3, quirks: [] });
    docs.forEach((doc, i) => expect({ ...scenarioFromText('x', scenarioToYaml(doc)), source: '' }).toEqual({ ...[a, b][i]!, source: '' }));
  });

  it('leaves the question out with ask: false (--no-ask)', async () => {
    const { conversations } = importDataset('multiwoz', input, { ask: false });
    expect(conversations.map((c) => c.turns.length)).toEqual([3, 3]);
    const o = { out: '', err: '' };
    const io = { out: (t: string) => void (o.out += t), err: (t: string) => void (o.err += t), isTTY: false };
    expect(await runMain(['import', '--format', 'multiwoz', input.path, '--no-ask'], io)).toBe(0);
    expect(o.out).not.toContain('Before I go');
    expect(o.err.split('\n')[0]).toMatch(/multiwoz-sample\.json: 2 conversations, 6 turns, 3 facts, 0 probes$/);
  });
});

describeShared('multiwoz21_convlab_sample/dummy_data.json', 'MultiWOZ importer on the ConvLab sample', (path) => {
  it('finds the six booking references the sample documents', () => {
    const { conversations, report } = importDataset('multiwoz', { path, file: 'dummy_data.json', base: dirname(path) });
    // 10 dialogues of 120 utterances in user/system pairs: 60 turns, plus one question in each of the 5 with a booking.
    expect(report).toMatchObject({ conversations: 10, turns: 65, facts: 6, probes: 6 });
    const refs = conversations.flatMap((c) => c.turns.flatMap((t) => Object.entries(t.facts).map(([k, v]) => `${c.id} ${t.index} ${k}=${v}`)));
    expect(refs).toEqual([
      'multiwoz-sng01856 4 hotel_ref=7GAWK763',
      'multiwoz-mul2168 4 train_ref=A9NHSO9Y',
      'multiwoz-mul2168 7 hotel_ref=5NAWGJDC',
      'multiwoz-mul2105 8 train_ref=7ZCVR4Q3',
      'multiwoz-pmul1690 10 hotel_ref=04CSEO7Q',
      'multiwoz-pmul1170 4 train_ref=xu1qlhvw',
    ]);
  });
});
