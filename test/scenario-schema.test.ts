import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import Ajv from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ScenarioError } from '../src/errors.js';
import { scenarioFromText } from '../src/scenario/load.js';
import { scenarioJsonSchema } from '../src/scenario/schema.js';
import { DURATION_PATTERN } from '../src/text/duration.js';
import { studyJsonSchema, loadStudy } from '../src/study/study.js';
import { parseDuration } from '../src/text/duration.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * schema/*.schema.json are generated from the loaders' zod schemas
 * (scripts/gen-schema.mjs): the committed files are what the schemas give
 * now; every shipped scenario and every scenario and study fixture passes
 * both the loader and the JSON Schema; and a corpus of bad files fails both.
 */

const ajv = new Ajv({ allErrors: true });
const validScenario = ajv.compile(scenarioJsonSchema());
const validStudy = ajv.compile(studyJsonSchema());
const errors = (v: typeof validScenario) => ajv.errorsText(v.errors);

describe('schema/*.schema.json', () => {
  it.each([
    ['scenario.schema.json', scenarioJsonSchema],
    ['study.schema.json', studyJsonSchema],
  ])('%s is what the zod schemas give now (regenerate with npm run gen:schema)', (name, make) => {
    expect(readFileSync(join(ROOT, 'schema', name), 'utf8')).toBe(`${JSON.stringify(make(), null, 2)}\n`);
  });

  it('the duration pattern reads what parseDuration reads', () => {
    for (const s of ['30', '30s', ' 5m ', '1.5h', '2d', '1w', '250ms', '0', 'soon', '5 minutes', '-1s', '1e3', '', '1.s', '.5m', '5M']) {
      expect(DURATION_PATTERN.test(s), s).toBe(parseDuration(s) !== undefined);
    }
  });
});

/** Every YAML or JSON file under a folder, with its path from the repository root. */
function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return files(p);
      return /\.(ya?ml|json)$/.test(f) ? [relative(ROOT, p)] : [];
    });
}

/** The files that are scenarios (id and turns) and studies (scenarios or policies); datasets and the rest are left out. */
function kinds(paths: readonly string[]): { scenarios: string[]; studies: string[] } {
  const scenarios: string[] = [];
  const studies: string[] = [];
  for (const p of paths) {
    const doc: unknown = parse(readFileSync(join(ROOT, p), 'utf8'));
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) continue;
    if ('turns' in doc && 'id' in doc) scenarios.push(p);
    else if ('policies' in doc || 'scenarios' in doc) studies.push(p);
  }
  return { scenarios, studies };
}

describe('good files pass the loader and the JSON Schema', () => {
  const shipped = files(join(ROOT, 'scenarios'));
  const fixtures = kinds(files(join(ROOT, 'test', 'fixtures')));

  it('finds them', () => {
    expect(shipped.length).toBeGreaterThanOrEqual(5);
    expect(fixtures.scenarios.length).toBeGreaterThanOrEqual(7);
    expect(fixtures.studies.length).toBeGreaterThanOrEqual(3);
  });

  it.each([...shipped, ...fixtures.scenarios])('%s', (p) => {
    const text = readFileSync(join(ROOT, p), 'utf8');
    expect(() => scenarioFromText(p, text)).not.toThrow();
    expect(validScenario(parse(text)), errors(validScenario)).toBe(true);
  });

  it.each(fixtures.studies)('%s', async (p) => {
    await expect(loadStudy(join(ROOT, p))).resolves.toBeDefined();
    expect(validStudy(parse(readFileSync(join(ROOT, p), 'utf8'))), errors(validStudy)).toBe(true);
  });

  it('a study with every kind of entry', async () => {
    const study = [
      'seed: 7',
      'model: gpt-4o-mini',
      'tokenizer: chars4',
      'cache: off',
      'cacheTtl: 10m',
      'rules: gemini',
      'scenarios:',
      '  - scenarios/*.yaml',
      '  - {generate: {profile: support, count: 3, correctionShare: 0.5}}',
      '  - {generate: {profile: companion, count: 1, seed: 3, turns: 20-30, probeAfter: 14d}}',
      '  - {import: {format: openai, path: chats.jsonl, prefix: chat}}',
      'policies:',
      '  - full',
      '  - window:',
      '  - window-turns:turns=3,naive=true',
      '  - window-tokens:budget=500|1000',
      '  - window-tokens: {budget: [1500, 2500]}',
      '  - summary-buffer: {budget: 2000, keepRecent: [2, 4], summaryModel: gpt-4o, keep: 0.9, forget: naive}',
      '  - retrieval: {maxAge: 30m, minScore: 0.1}',
      '  - retrieval: {maxAge: 3600}',
      '  - facts: {moderation: drop, sessionCap: 5}',
      'out: out/',
      'gate: {maxCostIncrease: 5%, maxRetentionDrop: 2%}',
      '',
    ].join('\n');
    const file = join(tempDir(), 'study.yaml');
    writeFileSync(file, study);
    await expect(loadStudy(file)).resolves.toBeDefined();
    expect(validStudy(parse(study)), errors(validStudy)).toBe(true);
  });
});

/** Bad scenario documents, each with what the loader says; the JSON Schema must reject each as well. */
const BAD_SCENARIOS: [what: string, yaml: string, loader: RegExp][] = [
  ['no id', 'turns:\n  - user: hi\n', /id: required but missing|id: expected string/],
  ['an id with capitals', 'id: Bad_Id\nturns:\n  - user: hi\n', /id: expected an id of a-z/],
  ['no turns', 'id: x\nturns: []\n', /turns: expected at least 1 item/],
  ['turns not a list', 'id: x\nturns: hello\n', /turns: expected list/],
  ['a number for the user message', 'id: x\nturns:\n  - user: 7\n', /turns\[0\]\.user: expected string, got number 7/],
  ['an unknown key in a turn', 'id: x\nturns:\n  - user: hi\n    colour: red\n', /unknown key "colour"/],
  ['an unknown key at the top', 'id: x\nowner: me\nturns:\n  - user: hi\n', /unknown key "owner"/],
  ['a bad role', 'id: x\nturns:\n  - role: bot\n    content: hi\n', /expected one of user\|assistant, got "bot"/],
  ['a number as a fact value', 'id: x\nturns:\n  - user: hi\n    facts: {zip: 90210}\n', /facts\.zip: expected string/],
  ['a bad gap', 'id: x\nturns:\n  - user: hi\n    gap: soon\n', /expected a duration/],
  ['an empty forget', 'id: x\nturns:\n  - user: hi\n    facts: {a: b}\n  - forget: []\n', /forget: expected at least 1 item/],
  ['a tool without its call', 'id: x\nturns:\n  - user: hi\n    tools:\n      - {args: {q: 1}}\n', /tools\[0\]\.call: required but missing|tools\[0\]\.call: expected string/],
  ['injection not a boolean', 'id: x\nturns:\n  - user: hi\n    injection: "yes"\n', /injection: expected boolean/],
  ['a model that is not a name', 'id: x\nmodel: 4\nturns:\n  - user: hi\n', /model: expected string, got number 4/],
  ['a billed total of no calls', 'id: x\nbilled: {calls: 0, input: 10}\nturns:\n  - user: hi\n', /billed\.calls: expected a number ≥ 1, got 0/],
  ['a billed total without its input', 'id: x\nbilled: {calls: 3}\nturns:\n  - user: hi\n', /billed\.input: required but missing/],
  ['a billed total with cached tokens', 'id: x\nbilled: {calls: 3, input: 10, cached: 5}\nturns:\n  - user: hi\n', /unknown key "cached"/],
];

/** Bad study documents, the same way. */
const BAD_STUDIES: [what: string, yaml: string, loader: RegExp][] = [
  ['a fractional seed', 'seed: 1.5\n', /seed: /],
  ['an unknown tokenizer', 'tokenizer: gpt2\n', /tokenizer: expected one of/],
  ['an unknown key', 'colour: red\n', /unknown key "colour"/],
  ['a bad cache setting', 'cache: sometimes\n', /cache: expected one of auto\|off/],
  ['a bad cacheTtl', 'cacheTtl: soon\n', /cacheTtl: expected a duration/],
  ['an unknown policy', 'policies: [nope]\n', /unknown policy "nope"/],
  ['a budget below its minimum', 'policies:\n  - window-tokens: {budget: 0}\n', /parameter budget: expected a number ≥ 1, got 0/],
  ['a fractional number of turns', 'policies:\n  - window-turns: {turns: 2.5}\n', /parameter turns: expected a whole number/],
  ['an unknown parameter', 'policies:\n  - window-turns: {foo: 1}\n', /unknown parameter "foo"/],
  ['an unknown parameter in a spec', 'policies:\n  - window-turns:foo=1\n', /unknown parameter "foo"/],
  ['a bad choice', 'policies:\n  - full: {forget: all}\n', /parameter forget: expected one of cascade\|naive/],
  ['a probability above 1', 'policies:\n  - summary: {keep: 2}\n', /parameter keep: expected a number from 0 to 1/],
  ['a bad duration', 'policies:\n  - retrieval: {maxAge: soon}\n', /parameter maxAge: expected a duration/],
  ['a string for a boolean', 'policies:\n  - window-turns: {naive: yes}\n', /parameter naive: expected true or false, got "yes"/],
  ['an empty sweep', 'policies:\n  - window-tokens: {budget: []}\n', /parameter budget: empty list/],
  ['two policies in one entry', 'policies:\n  - {full: {}, window: {}}\n', /expected one policy id as the key, got 2 keys/],
  ['no policies', 'policies: []\n', /policies: expected at least 1 item/],
  ['an unknown generator profile', 'scenarios:\n  - {generate: {profile: nope, count: 1}}\n', /unknown profile "nope"/],
  ['no conversations to generate', 'scenarios:\n  - {generate: {profile: support, count: 0}}\n', /count: expected a number ≥ 1/],
  ['an unknown import format', 'scenarios:\n  - {import: {format: csv, path: x.csv}}\n', /unknown import format "csv"/],
];

describe('bad files fail the loader and the JSON Schema', () => {
  it.each(BAD_SCENARIOS)('scenario: %s', (_, yaml, loader) => {
    expect(() => scenarioFromText('bad.yaml', yaml)).toThrow(ScenarioError);
    expect(() => scenarioFromText('bad.yaml', yaml)).toThrow(loader);
    expect(validScenario(parse(yaml))).toBe(false);
  });

  it.each(BAD_STUDIES)('study: %s', async (_, yaml, loader) => {
    const file = join(tempDir(), 'bad.yaml');
    writeFileSync(file, yaml);
    await expect(loadStudy(file)).rejects.toThrow(ScenarioError);
    await expect(loadStudy(file)).rejects.toThrow(loader);
    expect(validStudy(parse(yaml))).toBe(false);
  });
});
