import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import type { TurnOut } from '../src/scenario/docs.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import { counts, importFixture, roundsOf, writeInput } from './_import.js';
import { capture, problems } from './_io.js';
import { itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

const tmp = tempDir('ctxsim-sgd-');
const input = importFixture('sgd-sample.json');

describe('SGD importer on its fixture', () => {
  const { docs, conversations, report } = importDataset('sgd', input);
  const [a, b] = docs.map((d) => d.turns as TurnOut[]);

  it('makes one conversation per dialogue: a USER utterance opens a turn, the SYSTEM utterance is its reply', () => {
    expect(docs.map((d) => [d.id, d.title])).toEqual([
      ['sgd-1-90001', 'SGD: Restaurants_1'],
      ['sgd-2-90002', 'SGD: Hotels_2, Restaurants_1'],
    ]);
    expect(a!.map((t) => [t.user, t.assistant])).toEqual([
      ['Find me a Thai place in Oakland.', 'Kin Khao in Oakland looks good.'],
      ['Book it for four people at 7 pm.', 'Please confirm: Kin Khao in Oakland, 4 people at 7 pm.'],
      ['Yes, but make it 2 people.', 'Booked: Kin Khao, 2 people at 7 pm.'],
    ]);
    // The dialogue the system opens starts with a turn whose user message is empty.
    expect(b!.map((t) => t.user)).toEqual(['', 'I need a hotel in Paris for 3 nights.', 'Try London then, and find me a sushi restaurant there too.', 'Great, book the hotel in London.']);
    expect(report).toMatchObject({ conversations: 2, turns: 7, facts: 7, probes: 3 });
  });

  it('states the values the user gives as facts named service.slot; a later service call that passes the slot probes it', () => {
    expect(a!.map((t) => t.facts)).toEqual([
      { 'Restaurants_1.cuisine': 'Thai', 'Restaurants_1.city': 'Oakland' },
      { 'Restaurants_1.time': '7 pm' },
      // party_size has no span: "2" is written as is (a fact), "four" was not (a quirk).
      { 'Restaurants_1.party_size': '2' },
    ]);
    // The reservation passes time 19:00: the user's state still holds "7 pm", so it is the time the call needs.
    expect(a!.map((t) => t.probe)).toEqual([undefined, undefined, ['Restaurants_1.city', 'Restaurants_1.time']]);
    // London restated with the same value is no new fact; the hotel's city and the restaurant's are separate facts.
    expect(b!.map((t) => t.facts)).toEqual([undefined, { 'Hotels_2.where_to': 'Paris' }, { 'Hotels_2.where_to': 'London', 'Restaurants_1.cuisine': 'sushi' }, undefined]);
    expect(b!.map((t) => t.probe)).toEqual([undefined, undefined, undefined, ['Hotels_2.where_to']]);
    expect(report.quirks.map((q) => [q.key, q.count, q.examples])).toEqual([
      ['value-not-in-utterance', 1, ['1_90001 Restaurants_1.party_size=4']],
      ['system-first', 1, ['2_90002']],
      ['several-services', 1, ['2_90002 Hotels_2, Restaurants_1']],
    ]);
  });

  it('makes each service_call a tool call before the reply: the method, its parameters, and the count of results with the first', () => {
    expect([counts(a!), counts(b!)]).toEqual([
      { turns: 3, rounds: 2, calls: 2, results: 2, usages: 0 },
      { turns: 4, rounds: 3, calls: 4, results: 4, usages: 0 },
    ]);
    expect(roundsOf(a![0]!)).toEqual([
      {
        calls: [
          {
            call: 'FindRestaurants',
            args: { city: 'Oakland', cuisine: 'Thai' },
            result: { count: 2, first: { restaurant_name: 'Kin Khao', city: 'Oakland', cuisine: 'Thai', phone_number: '510-555-0101' } },
          },
        ],
      },
    ]);
    expect(b!.map((t) => roundsOf(t).flatMap((r) => r.calls.map((c) => [c.call, (c.result as { count: number }).count])))).toEqual([
      [],
      [['SearchHotel', 0]],
      [
        ['SearchHotel', 1],
        ['FindRestaurants', 1],
      ],
      [['ReserveHotel', 1]],
    ]);
    expect(conversations[1]!.turns[2]!.tools.filter((m) => m.role === 'assistant')).toHaveLength(1);
  });

  it('round trip: written as YAML and loaded, each is the same conversation', () => {
    docs.forEach((doc, i) => {
      const back = scenarioFromText(`${doc.id}.yaml`, scenarioToYaml(doc, ['header']));
      expect({ ...back, source: '' }).toEqual({ ...conversations[i]!, source: '' });
    });
  });

  it('takes a prefix, on the command line too', async () => {
    expect(importDataset('sgd', input, { prefix: 'dstc8' }).docs.map((d) => d.id)).toEqual(['dstc8-1-90001', 'dstc8-2-90002']);
    const io = capture();
    expect(await runMain(['import', '--format', 'sgd', input.path, '--prefix', 'x'], io)).toBe(0);
    expect(io.stderr.split('\n')[0]).toMatch(/sgd-sample\.json: 2 conversations, 7 turns, 7 facts, 3 probes$/);
    expect(io.stdout).toContain('id: x-2-90002');
  });
});

describe('SGD slot spans', () => {
  it('counts their offsets in characters, as Python does: an emoji before a span (two UTF-16 units) does not shift it', () => {
    const utterance = 'Ça va 🙂🙂 in São José, please.';
    const start = [...utterance].indexOf('S');
    const frames = [{ service: 'Restaurants_1', slots: [{ slot: 'city', start, exclusive_end: start + 8 }], actions: [] }];
    const f = writeInput(tmp, 'emoji.json', JSON.stringify([{ dialogue_id: '1_1', turns: [{ speaker: 'USER', utterance, frames }] }]));
    expect(importDataset('sgd', f).docs.map((d) => (d.turns as TurnOut[])[0]!.facts)).toEqual([{ 'Restaurants_1.city': 'São José' }]);
    // The span ending on the utterance's last character is inside it; one past it is not.
    const end = [...utterance].length;
    const last = [{ service: 'Restaurants_1', slots: [{ slot: 'city', start: end - 7, exclusive_end: end }], actions: [] }];
    expect(importDataset('sgd', writeInput(tmp, 'end.json', JSON.stringify([{ dialogue_id: '1_1', turns: [{ speaker: 'USER', utterance, frames: last }] }]))).docs[0]!.turns).toMatchObject([{ facts: { 'Restaurants_1.city': 'please.' } }]);
    const past = [{ service: 'Restaurants_1', slots: [{ slot: 'city', start: end - 7, exclusive_end: end + 1 }], actions: [] }];
    const text = JSON.stringify([{ dialogue_id: '1_1', turns: [{ speaker: 'USER', utterance, frames: past }] }]);
    // Placed at the slot's object, its column in UTF-16 units as every column is.
    expect(problems(() => importDataset('sgd', writeInput(tmp, 'past.json', text)))).toEqual([
      `past.json:1:${text.indexOf('{"slot"') + 1} [0].turns[0].frames[0].slots[0]: span ${end - 7}..${end + 1} is not inside the utterance (${end} characters)`,
    ]);
  });
});

describe('SGD dialogue ids as scenario ids', () => {
  it('keeps ids of other scripts distinct and readable: their letters without accents, and a hash of the id when it is not plain ASCII', () => {
    const turns = [{ speaker: 'USER', utterance: 'Hi.', frames: [] }];
    const ids = ['対話_1', '会話_1', 'Café_1', 'Диалог', '1_00000'];
    const f = writeInput(tmp, 'scripts.json', JSON.stringify(ids.map((dialogue_id) => ({ dialogue_id, turns }))));
    const out = importDataset('sgd', f).docs.map((d) => d.id);
    // The hash: the first 8 hex digits of the id's SHA-256, as the docs say.
    const hash = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 8);
    expect(out).toEqual([`sgd-1-${hash('対話_1')}`, `sgd-1-${hash('会話_1')}`, `sgd-cafe-1-${hash('Café_1')}`, `sgd-${hash('Диалог')}`, 'sgd-1-00000']);
    // The same dialogue always gets the same id.
    expect(importDataset('sgd', f).docs.map((d) => d.id)).toEqual(out);
  });
});

describe('malformed SGD data', () => {
  it('lists every problem at its line and path in the file, and yields nothing', () => {
    const good = { speaker: 'USER', utterance: 'In Oakland.', frames: [{ service: 'Restaurants_1', slots: [{ slot: 'city', start: 3, exclusive_end: 10 }], actions: [] }] };
    const f = writeInput(
      tmp,
      'bad.json',
      JSON.stringify(
        [
          { dialogue_id: '1_1', services: ['Restaurants_1'], turns: [good, { speaker: 'user', utterance: 'hi', frames: [] }] },
          { dialogue_id: '1_2', turns: [{ ...good, frames: [{ service: 'Restaurants_1', slots: [{ slot: 'city', start: 3, exclusive_end: 40 }] }] }] },
          { dialogue_id: '1_3', turns: [] },
          { dialogue_id: '1_4', turns: [{ speaker: 'SYSTEM', utterance: 'ok', frames: [{ service: 'Restaurants_1', service_call: { method: 'FindRestaurants', parameters: { city: 3 } } }] }] },
        ],
        null,
        2,
      ),
    );
    expect(problems(() => importDataset('sgd', f))).toEqual([
      'bad.json:26:20 [0].turns[1].speaker: expected one of USER|SYSTEM, got "user"',
      'bad.json:42:15 [1].turns[0].frames[0].slots[0]: span 3..40 is not inside the utterance (11 characters)',
      'bad.json:55:14 [2].turns: expected at least 1 item(s)',
      'bad.json:69:25 [3].turns[0].frames[0].service_call.parameters.city: expected string, got number 3 (quote it)',
    ]);
    expect(problems(() => importDataset('sgd', writeInput(tmp, 'obj.json', '{"dialogue_id": "1_1"}')))).toEqual(['obj.json:1:1: expected a JSON array of SGD dialogues']);
    expect(problems(() => importDataset('sgd', writeInput(tmp, 'syntax.json', '[\n  {"dialogue_id": }\n]')))[0]).toMatch(/^syntax\.json:2:\d+: invalid JSON: /);
  });
});

itShared('sgd_sample/dialogues_001_first10.json', 'the first 10 SGD training dialogues: 100 turns, 42 facts from the user’s slot spans, 36 probes by later service calls, 24 tool calls', (path) => {
  const { docs, conversations, report } = importDataset('sgd', { path, file: 'dialogues_001_first10.json', base: dirname(path) });
  expect(report).toMatchObject({ conversations: 10, turns: 100, facts: 42, probes: 36 });
  const turns = docs.flatMap((d) => d.turns as TurnOut[]);
  expect(counts(turns)).toEqual({ turns: 100, rounds: 24, calls: 24, results: 24, usages: 0 });
  const calls = turns.flatMap((t) => roundsOf(t).flatMap((r) => r.calls.map((c) => c.call)));
  expect([calls.filter((c) => c === 'FindRestaurants').length, calls.filter((c) => c === 'ReserveRestaurant').length]).toEqual([12, 12]);
  const facts = turns.flatMap((t) => Object.keys(t.facts ?? {}));
  expect(new Set(facts)).toEqual(new Set(['Restaurants_1.city', 'Restaurants_1.cuisine', 'Restaurants_1.time', 'Restaurants_1.date']));
  const probes = turns.flatMap((t) => t.probe ?? []);
  expect(['city', 'cuisine', 'date', 'time'].map((s) => probes.filter((p) => p === `Restaurants_1.${s}`).length)).toEqual([15, 3, 7, 11]);
  // party_size ("for one people") and price_range ("economical") are informed without being written.
  expect(report.quirks.map((q) => [q.key, q.count])).toEqual([['value-not-in-utterance', 7]]);
  const first = conversations[0]!;
  expect([first.id, first.title, first.turns.length]).toEqual(['sgd-1-00000', 'SGD: Restaurants_1', 12]);
  docs.forEach((doc, i) => expect({ ...scenarioFromText('x.yaml', scenarioToYaml(doc)), source: '' }).toEqual({ ...conversations[i]!, source: '' }));
});
