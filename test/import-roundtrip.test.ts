import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { generateConversations, generateDocs, PROFILES } from '../src/scenario/generate/index.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromFile, scenarioFromText } from '../src/scenario/load.js';
import { scenarioToYaml } from '../src/scenario/yaml.js';
import type { Conversation } from '../src/types.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'import');
const tmp = mkdtempSync(join(tmpdir(), 'ctxsim-roundtrip-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A conversation without where it came from: what must survive the round trip. */
const content = (c: Conversation) => ({ ...c, source: '' });

const imports: [string, string, Record<string, unknown>][] = [
  ['openai', 'openai-chats.jsonl', { annotations: 'openai-chats.facts.yaml' }],
  ['locomo', 'locomo-sample.json', {}],
  ['locomo', 'locomo-sample.json', { user: 'speaker_b', factValue: 'answer' }],
  ['locomo', 'locomo-sample.json', { questions: 'after' }],
  ['abcd', 'abcd-sample.json', {}],
];

describe('round trip: import → YAML → load gives the same conversation', () => {
  it.each(imports)('%s %s %j', (format, file, options) => {
    const { docs, conversations } = importDataset(format, { path: join(FIXTURES, file), file, base: FIXTURES }, options);
    docs.forEach((doc, i) => {
      const back = scenarioFromText(`${doc.id}.yaml`, scenarioToYaml(doc, ['header']));
      expect(content(back)).toEqual(content(conversations[i]!));
    });
  });

  it('through files written by ctxsim import --out', async () => {
    const out = join(tmp, 'locomo');
    const io = { out: () => {}, err: () => {}, isTTY: false };
    expect(await runMain(['import', '--format', 'locomo', join(FIXTURES, 'locomo-sample.json'), '--questions', 'each', '--out', out], io)).toBe(0);
    // One scenario per question with something to probe: the sixth of conv-a1 has no evidence.
    const ids = ['a1-q001', 'a1-q002', 'a1-q003', 'a1-q004', 'a1-q005', 'a1-q007', 'b2-q001'].map((q) => `locomo-conv-${q}`);
    expect(readdirSync(out).sort()).toEqual(ids.map((id) => `${id}.yaml`));
    const { conversations } = importDataset('locomo', { path: join(FIXTURES, 'locomo-sample.json'), file: 'x', base: FIXTURES }, { questions: 'each' });
    expect(conversations.map((c) => c.id)).toEqual(ids);
    ids.forEach((id, i) => expect(content(scenarioFromFile(join(out, `${id}.yaml`)))).toEqual(content(conversations[i]!)));
  });

  it('generated conversations survive it too, for any seed and profile (property)', () => {
    const profiles = [...PROFILES.keys()];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(...profiles), (seed, profile) => {
        const [doc] = generateDocs({ profile, count: 1, seed, params: profile === 'companion' ? { turns: [50, 70] } : {} });
        const [direct] = generateConversations({ profile, count: 1, seed, params: profile === 'companion' ? { turns: [50, 70] } : {} });
        expect(content(scenarioFromText('g.yaml', scenarioToYaml(doc!)))).toEqual(content(direct!));
      }),
      { seed: 42, numRuns: 24 },
    );
  });
});
