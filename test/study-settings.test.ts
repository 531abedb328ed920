import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { budgetTableSettings, commandSettings, flagSettings, gateSettings, oneSetting, ownSettings, settingArgs, upkeepOverrides } from '../src/cli/_setting-flags.js';
import { studyFromFlags } from '../src/cli/_study.js';
import { BUDGET_TABLE_OPTIONS, GATE_OPTIONS, RECORDS_OPTION, REPORT_OPTIONS, STUDY_OPTIONS, UPKEEP_OPTIONS } from '../src/cli/_study-options.js';
import { RUN_SPEC_KEYS, runSpecOf } from '../src/engine/spec.js';
import { defaultUpkeep, withUpkeepOverrides } from '../src/recording/upkeep.js';
import { DEFAULT_PROMPTS } from '../src/upkeep/prompts.js';
import { REPORT_SPEC_KEYS } from '../src/report/settings.js';
import { UsageError } from '../src/errors.js';
import { loadScenarioOrStudy, parseScenario, STUDY_FILE_KEYS } from '../src/study/scenario-file.js';
import { keysOf, SETTINGS, WRITTEN_SETTINGS } from '../src/study/settings.js';
import { loadStudy, STUDY_FILE_KEY_ORDER, studyJsonSchema } from '../src/study/study.js';
import { asyncProblems, cli, expectUsage } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * The run settings are declared once (`RUN_SPEC` and each setting's meta,
 * engine/spec.ts); their study keys, JSON Schema, flags and reading follow.
 * These hold the derived parts to the declaration and to each other.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'email-correction.yaml');

/** Every setting written the same way everywhere: as a study file gives it and as flags do. */
const STUDY_TEXT = ['seed: 7', 'model: gpt-4o', 'tokenizer: chars4', 'prices: builtin', 'cache: off', 'cacheTtl: 1h', 'cacheBreakpoint: turn', 'coldStart: true', 'rules: anthropic', 'policies: [full]', ''].join('\n');
const FLAGS = { seed: 7, model: ['gpt-4o'], tokenizer: 'chars4', prices: 'builtin', cache: 'off', cacheTtl: '1h', cacheBreakpoint: 'turn', coldStart: true, rules: 'anthropic' };
const READ = { seed: 7, models: ['gpt-4o'], tokenizer: 'chars4', prices: 'builtin', promptCache: 'off', promptCacheTtl: 3600, cacheBreakpoint: 'turn', coldStart: true, messageRules: 'anthropic' };

describe('the run settings as a study file and the command line write them', () => {
  it('every setting but the run’s upkeep is a study key, described in the JSON Schema, by which a study is told from a scenario file', () => {
    // The run settings, the report settings, then the study's own; the command line's have no study key.
    const own = ['scenarios', 'policies', 'out', 'gate', 'upkeepSource', 'records', 'answers', 'judge'];
    expect(WRITTEN_SETTINGS.map((s) => s.name)).toEqual([...RUN_SPEC_KEYS.filter((k) => k !== 'upkeep'), ...REPORT_SPEC_KEYS, ...own]);
    expect(WRITTEN_SETTINGS.map((s) => s.of)).toEqual([...RUN_SPEC_KEYS.filter((k) => k !== 'upkeep').map(() => 'run'), ...REPORT_SPEC_KEYS.map(() => 'report'), ...own.map(() => 'study')]);
    expect(SETTINGS.filter((s) => s.key === undefined).map((s) => s.name)).toEqual(['upkeep', 'tokenCache', 'jobs', 'policyTimeout', 'policyMemory']);
    const properties = studyJsonSchema().properties as Record<string, { description?: string }>;
    for (const key of WRITTEN_SETTINGS.flatMap(keysOf)) {
      expect(STUDY_FILE_KEY_ORDER, key).toContain(key);
      expect(properties[key]?.description, key).toMatch(/\w{3}/);
    }
    expect(Object.keys(properties)).toEqual(STUDY_FILE_KEY_ORDER);
    expect([...STUDY_FILE_KEYS].sort()).toEqual([...STUDY_FILE_KEY_ORDER].sort());
  });

  it('each study key, and no other, tells a study file handed as a scenario from a scenario file', () => {
    const dir = tempDir();
    for (const key of STUDY_FILE_KEY_ORDER) {
      expect(() => parseScenario('s.yaml', `${key}: 1\n`), key).toThrow(/^s\.yaml:1:1: this is a study file, not a scenario \(it has no turns\)/);
      writeFileSync(join(dir, 's.yaml'), `${key}: 1\n`);
      expect(loadScenarioOrStudy(join(dir, 's.yaml')), key).toBe('study');
    }
    // A scenario's own keys, with no turns: a scenario missing its turns.
    expect(() => parseScenario('s.yaml', 'id: a\ntitle: b\n')).toThrow(/turns/);
    expect(() => parseScenario('s.yaml', 'id: a\ntitle: b\n')).not.toThrow(/study file/);
  });

  it('a setting with a flag is an option of the commands that run a study (a report setting: of run, or of table for the budget table’s layout), of the kind its schema is', () => {
    const flagged = (of: string) => WRITTEN_SETTINGS.flatMap((s) => (s.meta.flag && s.of === of ? [s.meta.flag.name] : []));
    expect(flagged('run')).toEqual(['seed', 'model', 'tokenizer', 'prices', 'cache', 'cache-ttl', 'cache-breakpoint', 'cold-start', 'rules']);
    expect(flagged('report')).toEqual(['min-retention', 'min-saving', 'columns', 'sort']);
    const options = STUDY_OPTIONS as Record<string, { type?: string; array?: boolean; choices?: readonly string[]; coerce?: unknown }>;
    for (const name of flagged('run')) expect(options[name], name).toBeDefined();
    expect([...Object.keys(REPORT_OPTIONS), ...Object.keys(BUDGET_TABLE_OPTIONS)]).toEqual(flagged('report'));
    for (const name of flagged('report')) expect(options[name], name).toBeUndefined();
    // Text, read through the flag's own form (comma-separated names; a row order), not yargs' choices.
    expect(BUDGET_TABLE_OPTIONS).toEqual({ columns: expect.objectContaining({ type: 'string' }), sort: expect.objectContaining({ type: 'string' }) });
    expect(BUDGET_TABLE_OPTIONS.sort).not.toHaveProperty('choices');
    expect(REPORT_OPTIONS['min-saving']).toMatchObject({ type: 'string' });
    expect(options.seed!.coerce).toBeTypeOf('function');
    expect(options.model!.array).toBe(true);
    expect(options.cache!.choices).toEqual(['auto', 'off']);
    expect(options.rules!.choices).toEqual(['openai', 'anthropic', 'gemini']);
    // A long list of choices is in the help, checked as the study key is.
    expect(options.tokenizer).toMatchObject({ type: 'string', describe: expect.stringMatching(/: auto \| o200k_base \| .* \| mistral-v3$/) });
    expect(options['cache-ttl']).toMatchObject({ type: 'string' });
    expect(options['cold-start']).toMatchObject({ type: 'boolean' });
  });

  it('the study’s own flags (--scenario, --policy, --out, --records, --answers, --judge) are its settings’: options and reading from STUDY_SPEC, as a study file reads them', () => {
    expect(SETTINGS.filter((s) => s.of === 'study' && s.meta.flag).map((s) => s.meta.flag!.name)).toEqual(['scenario', 'policy', 'out', 'records', 'answers', 'judge']);
    // What a study runs is read apart (the policies' modules loaded, the globs kept with their folder): their flags are options, not read here.
    expect(ownSettings({ policy: ['full'], scenario: ['a.yaml'] })).toEqual({});
    expect(STUDY_OPTIONS.policy).toMatchObject({ type: 'string', array: true, describe: expect.stringContaining('window-turns (turns=10, naive=false)') });
    // --out takes the next word, whatever it is (`--out -`); --records names its values in its help, so no yargs choices.
    expect(STUDY_OPTIONS.out).toEqual({ type: 'string', nargs: 1, describe: 'output folder, or one file (.csv .json .md .html), or - for stdout' });
    expect(RECORDS_OPTION).toEqual({ type: 'string', describe: expect.stringMatching(/^full \| summary: /), defaultDescription: 'full' });
    expect(Object.keys(STUDY_OPTIONS)).not.toContain('records');
    expect(ownSettings({ out: 'reports/a', records: 'summary', answers: true, judge: 'gpt-4o' })).toEqual({ out: resolve('reports/a'), records: 'summary', answers: true, judge: 'gpt-4o' });
    expect(ownSettings({ out: '-' })).toEqual({ out: '-' });
    expect(() => ownSettings({ records: 'all' })).toThrow(new UsageError('--records: expected one of full|summary, got "all"'));
    expect(() => ownSettings({ judge: ' ' })).toThrow(new UsageError('--judge: name the model that grades the answers, e.g. --judge gpt-4o'));
  });

  it('each key of the study’s gate: is a setting of its own, ctxsim check’s flag read as the key is (a path from the working folder)', async () => {
    expect(Object.keys(GATE_OPTIONS)).toEqual(['baseline', 'max-cost-increase', 'max-retention-drop', 'max-answer-drop']);
    // A limit takes the next word whatever it is: `-5%` is a limit to refuse, not a flag.
    expect(GATE_OPTIONS['max-cost-increase']).toEqual({ type: 'string', nargs: 1, describe: 'allowed cost rise per scenario × policy, a percentage (default 5%)' });
    const held = { maxCostIncrease: 0.1, maxRetentionDrop: { points: 0.025 }, maxAnswerDrop: { probes: 1 } };
    expect(gateSettings({ baseline: 'b.json', maxCostIncrease: '10%', maxRetentionDrop: '2.5%', maxAnswerDrop: '1', seed: 3 })).toEqual({ baseline: resolve('b.json'), ...held });
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'gate: {baseline: b.json, maxCostIncrease: 10%, maxRetentionDrop: 2.5%, maxAnswerDrop: 1}\npolicies: [full]\n');
    expect((await loadStudy(join(dir, 'study.yaml'))).gate).toEqual({ baseline: join(dir, 'b.json'), ...held });
    expect(() => gateSettings({ maxCostIncrease: '5' })).toThrow(new UsageError('--max-cost-increase: write 500% or 5% (a bare number could be a fraction or a percentage), got 5'));
    expect(() => gateSettings({ maxAnswerDrop: '101%' })).toThrow(new UsageError('--max-answer-drop: retention cannot drop by more than 100%, got 101%'));
    expect(() => gateSettings({ baseline: '' })).toThrow(new UsageError('--baseline: name the baseline file (the JSON that ctxsim run --save-baseline writes), got ""'));
  });

  it('flags read as the study file reads: the same values, a path from the working folder', async () => {
    expect(flagSettings(FLAGS)).toEqual(READ);
    expect(flagSettings({ prices: 'my-prices.json' })).toEqual({ prices: resolve('my-prices.json') });
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), STUDY_TEXT);
    expect(await loadStudy(join(dir, 'study.yaml'))).toMatchObject(READ);
    writeFileSync(join(dir, 'priced.yaml'), 'prices: my-prices.json\n');
    expect(await asyncProblems(() => loadStudy(join(dir, 'priced.yaml')))).toEqual([expect.stringMatching(/priced\.yaml.* prices: price table .*my-prices\.json: /)]);
  });

  it('the report settings read alike from a study file and the flags, and decide no record: the run spec leaves them out', async () => {
    expect(flagSettings({ minRetention: '90%', minSaving: '12.5%' })).toEqual({ minRetention: 0.9, minSaving: 0.125 });
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'minRetention: 90%\nminSaving: 12.5%\nbudgetColumns: [policy, vs_full]\nbudgetSort: retention\npolicies: [full]\n');
    const study = await loadStudy(join(dir, 'study.yaml'));
    expect(study).toMatchObject({ minRetention: 0.9, minSaving: 0.125, budgetColumns: ['policy', 'vs_full'], budgetSort: 'retention' });
    expect(Object.keys(runSpecOf(study)).filter((k) => (REPORT_SPEC_KEYS as readonly string[]).includes(k))).toEqual([]);
    expect(() => flagSettings({ minSaving: '5' })).toThrow(new UsageError('--min-saving: write 500% or 5% (a bare number could be a fraction or a percentage), got 5'));
  });

  it('a value a setting does not take is one usage error naming its flag', async () => {
    expect(() => flagSettings({ cacheTtl: '5x' })).toThrow(new UsageError('--cache-ttl: expected a duration such as 300s or 5m, got "5x"'));
    // Written well, but not a value the spec holds: said at the flag, not at the setting's name in the library.
    expect(() => flagSettings({ cacheTtl: '0' })).toThrow(new UsageError('--cache-ttl: expected a number > 0, got 0'));
    expect(() => flagSettings({ tokenizer: 'gpt2' })).toThrow(/^--tokenizer: expected one of auto\|o200k_base\|.*, got "gpt2"$/);
    await expectUsage(['run', '--scenario', SCENARIO, '--policy', 'full', '--cache-ttl', 'soon', '--out', '-'], 'ctxsim: --cache-ttl: expected a duration such as 300s or 5m, got "soon"');
    await expectUsage(['run', '--scenario', SCENARIO, '--policy', 'full', '--rules', 'mine', '--out', '-'], /--rules.*"mine".*"openai", "anthropic", "gemini"/);
  });

  it('a new flag decides the run as the study key does: --cache-ttl on Claude', async () => {
    const shipped = join(ROOT, 'scenarios', 'support-email-correction.yaml');
    type Out = { policies: { cachedTokens: number; totalCost: string }[] };
    const run = async (...more: string[]) => (JSON.parse((await cli('run', ...more, '--policy', 'full', '--model', 'claude-sonnet-4-5', '--no-token-cache', '--quiet', '--out', '-', '--format', 'json')).out) as Out).policies[0]!;
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), `scenarios: ['${shipped}']\ncacheTtl: 1h\n`);
    const [five, hour, second, fromStudy] = [await run('--scenario', shipped), await run('--scenario', shipped, '--cache-ttl', '1h'), await run('--scenario', shipped, '--cache-ttl', '1s'), await run(join(dir, 'study.yaml'))];
    expect(hour).toEqual(fromStudy);
    // A prefix that lives an hour is read again after the pauses that outlive five minutes; one that lives a second almost never is.
    expect(hour.cachedTokens).toBeGreaterThan(five.cachedTokens);
    expect(second.cachedTokens).toBeLessThan(five.cachedTokens / 4);
  });

  it('a flag replaces the study’s key, which is then neither used nor checked', async () => {
    const dir = tempDir();
    const file = join(dir, 'study.yaml');
    writeFileSync(file, 'models: [no-such-model, no-such-model]\ncacheTtl: 0\npolicies: [full]\n');
    expect(await asyncProblems(() => studyFromFlags({ study: file }))).toEqual([
      expect.stringMatching(/study\.yaml:1:25 models\[1\]: model no-such-model is listed twice \(also models\[0\]\)$/),
      expect.stringMatching(/study\.yaml:2:11 cacheTtl: expected a number > 0, got 0$/),
      expect.stringMatching(/models\[0\]: unknown model "no-such-model"/),
      expect.stringMatching(/models\[1\]: unknown model "no-such-model"/),
    ]);
    const study = await studyFromFlags({ study: file, model: ['gpt-4o-mini'], cacheTtl: '1h', tokenCache: false });
    expect([study.models, study.promptCacheTtl]).toEqual([['gpt-4o-mini'], 3600]);
  });

  it('a repeated item is a problem listed with the file’s others, not instead of them', async () => {
    const dir = tempDir();
    const file = join(dir, 'study.yaml');
    writeFileSync(file, ['models: [gpt-4o, gpt-4o]', 'toolDefs: [{name: a}, {type: function, function: {name: a}}]', 'minRetention: 120%', 'policies: [full]', ''].join('\n'));
    expect(await asyncProblems(() => loadStudy(file))).toEqual([
      expect.stringMatching(/study\.yaml:1:18 models\[1\]: model gpt-4o is listed twice \(also models\[0\]\)$/),
      expect.stringMatching(/study\.yaml:2:\d+ toolDefs\[1\]\.name: tool a is defined twice \(also toolDefs\[0\]\)$/),
      expect.stringMatching(/study\.yaml:3:\d+ minRetention: /),
    ]);
  });

  it('the command line’s settings and the study’s own are flags of every study command, in the order of their specs, each of its schema’s kind and bounds', () => {
    expect(Object.keys(STUDY_OPTIONS)).toEqual([
      ...['out', 'policy', 'scenario', 'seed', 'model', 'tokenizer', 'prices', 'cache', 'cache-ttl', 'cache-breakpoint', 'cold-start', 'rules', 'token-cache'],
      ...['jobs', 'policy-timeout', 'policy-memory', 'upkeep', 'cassette', 'base-url', 'api-key-env', 'answers', 'judge'],
    ]);
    const options = STUDY_OPTIONS as Record<string, { type?: string; coerce?: (raw: unknown) => unknown; defaultDescription?: string }>;
    expect(options['policy-memory']!.defaultDescription).toBe('1024');
    expect(() => options['policy-memory']!.coerce!('8')).toThrow(new UsageError('--policy-memory: expected a whole number ≥ 16, got 8'));
    expect(() => options.jobs!.coerce!('0')).toThrow(new UsageError('--jobs: expected a whole number ≥ 1, got 0'));
    expect(options.answers).toMatchObject({ type: 'boolean', defaultDescription: 'the study’s, else false' });
    expect(options.upkeep).toMatchObject({ type: 'string', defaultDescription: 'the study’s, else simulate' });
  });

  it('the command line’s settings read typed from their flags, a bad value one usage error naming its flag', () => {
    expect(commandSettings({ tokenCache: 'c', jobs: 2, policyTimeout: 5, upkeep: 'replay', cassette: 'c.jsonl', baseUrl: 'http://localhost:11434/v1', apiKeyEnv: 'KEY', seed: 3 })).toEqual({ tokenCache: 'c', jobs: 2, policyTimeout: 5 });
    // The cache folder as given (checked where it is used, cli/_cache-folder.ts); none with --no-token-cache.
    expect(commandSettings({ tokenCache: false })).toEqual({ tokenCache: false });
    expect(() => commandSettings({ tokenCache: '' })).toThrow(new UsageError('--token-cache: name a folder (or use --no-token-cache)'));
  });

  it('each key of the study’s upkeep: is a setting of its own with its default; the mode, cassette and endpoint flags read over it, each in its own written form', async () => {
    expect(Object.keys(UPKEEP_OPTIONS)).toEqual(['upkeep', 'cassette', 'base-url', 'api-key-env']);
    expect(STUDY_OPTIONS.upkeep).toBe(UPKEEP_OPTIONS.upkeep);
    // The flag reads over the study's, a path from the working folder.
    const over = upkeepOverrides({ upkeep: 'record', cassette: 'c.jsonl', baseUrl: 'http://localhost:11434/v1', apiKeyEnv: 'KEY', tokenCache: 'c', seed: 3 });
    expect(over).toEqual({ mode: 'record', cassette: resolve('c.jsonl'), baseURL: 'http://localhost:11434/v1', apiKeyEnv: 'KEY' });
    expect(upkeepOverrides({ jobs: 2 })).toEqual({});
    expect(() => upkeepOverrides({ upkeep: 'nope' })).toThrow(new UsageError('--upkeep: expected one of simulate|record|replay|live, got nope'));
    expect(() => upkeepOverrides({ cassette: '' })).toThrow(new UsageError('--cassette: name a file'));
    expect(() => upkeepOverrides({ baseUrl: 'here' })).toThrow(new UsageError('--base-url: expected the http(s) URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1, got here'));
    expect(() => upkeepOverrides({ apiKeyEnv: 'MY-KEY' })).toThrow(new UsageError('--api-key-env: expected the name of an environment variable (letters, digits and _), got MY-KEY'));
    // A study's upkeep: each key it gives read at its place (the cassette from the study's folder), each it does not its default.
    const dir = tempDir();
    const defaults = { mode: 'simulate' as const, cassette: join(dir, 'upkeep.cassette.jsonl'), baseURL: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', concurrency: 4, timeout: 60, retries: 3, maxResponseBytes: 4_000_000, prompts: DEFAULT_PROMPTS };
    expect(defaultUpkeep(dir)).toEqual(defaults);
    writeFileSync(join(dir, 'study.yaml'), 'upkeep: {mode: replay, cassette: tapes/c.jsonl, retries: 0, maxUpkeepCost: 2, prompts: {extract: Facts.}}\npolicies: [full]\n');
    const own = { ...defaults, mode: 'replay' as const, cassette: join(dir, 'tapes', 'c.jsonl'), retries: 0, maxUpkeepCost: 2, prompts: { ...DEFAULT_PROMPTS, extract: 'Facts.' } };
    expect((await loadStudy(join(dir, 'study.yaml'))).upkeepSource).toEqual(own);
    writeFileSync(join(dir, 'empty.yaml'), 'upkeep: {}\npolicies: [full]\n');
    expect((await loadStudy(join(dir, 'empty.yaml'))).upkeepSource).toEqual(defaults);
    expect(withUpkeepOverrides(own, over)).toEqual({ ...own, ...over });
    // Every problem of the study's upkeep: at its key.
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'upkeep: {concurrency: 0, baseURL: here, prompts: {extract: "{facts}"}}\npolicies: [full]\n');
    expect(await asyncProblems(() => loadStudy(bad))).toEqual([
      `${bad}:1:35 upkeep.baseURL: expected the http(s) URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1, got "here"`,
      `${bad}:1:23 upkeep.concurrency: expected a number ≥ 1, got 0`,
      `${bad}:1:60 upkeep.prompts.extract: unknown placeholder {facts} (this prompt takes none), got "{facts}"`,
    ]);
    // Said in ctxsim's words, as the flags say them: not zod's "Invalid URL" or "must match pattern /…/".
    writeFileSync(bad, 'upkeep: {baseURL: "ftp://x", apiKeyEnv: 1x}\npolicies: [full]\n');
    expect(await asyncProblems(() => loadStudy(bad))).toEqual([
      `${bad}:1:19 upkeep.baseURL: expected the http(s) URL of an OpenAI-compatible API, e.g. http://localhost:11434/v1, got "ftp://x"`,
      `${bad}:1:41 upkeep.apiKeyEnv: expected the name of an environment variable (letters, digits and _), got "1x"`,
    ]);
  });

  it('a command reads the setting flags it declares: table’s --columns and --sort as budgetColumns and budgetSort, not run’s --sort', () => {
    expect(budgetTableSettings({ columns: 'policy, vs_full,', sort: 'retention' })).toEqual({ budgetColumns: ['policy', 'vs_full'], budgetSort: 'retention' });
    expect(() => budgetTableSettings({ columns: ' , ' })).toThrow(new UsageError('--columns: name at least one column, e.g. --columns policy,cost_per_1000_conversations_usd,retention'));
    expect(() => budgetTableSettings({ columns: 'policy,polcy' })).toThrow(/^--columns: no budget table column "polcy" \(did you mean policy\?\)/);
    expect(() => budgetTableSettings({ sort: 'price' })).toThrow(new UsageError('--sort: expected one of cost|retention|name|study, got price'));
    // run's --sort orders the table it prints: not the budget table's budgetSort.
    expect(flagSettings({ sort: 'retention', columns: 'policy', minSaving: '10%' })).toEqual({ minSaving: 0.1 });
  });

  it('explain’s and calibrate’s one --model reads as run’s list of one', () => {
    expect(oneSetting({ model: 'gpt-4o' }, 'models')).toBe('gpt-4o');
    expect(oneSetting({}, 'models')).toBeUndefined();
    expect(() => oneSetting({ model: ' ' }, 'models')).toThrow(new UsageError('--model: name a chat model, e.g. --model gpt-4o-mini'));
    expect(flagSettings({ model: ['gpt-4o'] })).toEqual({ models: ['gpt-4o'] });
    expect(() => flagSettings({ model: ['a', 'a'] })).toThrow(new UsageError('--model: a given twice'));
  });

  it('ctxsim check’s command that accepts a change repeats the flags of the settings that decide records, and only those', () => {
    const given = { seed: 3, jobs: 4, policyTimeout: 5, judge: 'gpt-4o', answers: true, upkeep: 'replay', cassette: 'c.jsonl', baseUrl: 'http://h/v1', apiKeyEnv: 'K', minRetention: '90%', tokenCache: false as const };
    expect(settingArgs(given)).toEqual(['--seed', '3', '--upkeep', 'replay', '--cassette', 'c.jsonl', '--base-url', 'http://h/v1', '--api-key-env', 'K', '--answers', '--judge', 'gpt-4o']);
    expect(settingArgs({ answers: false })).toEqual(['--no-answers']);
  });

  it('ctxsim check’s command that accepts a change repeats every setting flag given, in the settings’ order', () => {
    expect(settingArgs({ cacheBreakpoint: 'turn', model: ['a', 'b'], seed: 3, cacheTtl: '1h', policy: ['full'] })).toEqual(['--seed', '3', '--model', 'a', '--model', 'b', '--cache-ttl', '1h', '--cache-breakpoint', 'turn']);
    // On or off: the flag alone, or its --no- form.
    expect(settingArgs({ coldStart: true })).toEqual(['--cold-start']);
    expect(settingArgs({ coldStart: false })).toEqual(['--no-cold-start']);
  });
});
