import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyFromString } from '../src/study/study.js';
import { cli, expectUsage } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A bad flag value is one line on stderr that names the flag (or file) and
 * the value as typed, with exit code 2; a value the docs show is accepted.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'email-correction.yaml');
/** A short study run: one scenario, one policy, no cache; a run that were not refused would print its report. */
const SMALL = ['--scenario', SCENARIO, '--policy', 'full', '--no-token-cache', '--quiet'];
const RUN = ['run', ...SMALL, '--out', '-'];

describe('a pipeline on the command line', () => {
  const LONG = 'pipeline:stages=mask-observations:keep=5 > summary-buffer';
  const SHORT = 'pipeline:mask-observations:keep=5 > summary-buffer';

  it('takes its stages with or without their name, stages=', () => {
    const names = (spec: string) => {
      const r = policyFromString(spec);
      return typeof r === 'string' ? r : r.map((v) => v.name);
    };
    expect(names(LONG)).toEqual(['pipeline:mask-observations:keep=5 > summary-buffer']);
    expect(names(SHORT)).toEqual(names(LONG));
    expect(names('pipeline: stages = mask-observations > window-turns:turns=1|2')).toEqual([
      'pipeline:mask-observations > window-turns:turns=1',
      'pipeline:mask-observations > window-turns:turns=2',
    ]);
  });

  it('runs as --policy stages=…', async () => {
    const r = await cli('explain', SCENARIO, '--policy', LONG, '--turn', '2');
    expect(r.err).toBe('');
    expect(r.out.split('\n')[0]).toContain(' · pipeline:mask-observations:keep=5 > summary-buffer · turn 2 · ');
    expect(r.code).toBe(0);
  });
});

describe('a value not among the choices', () => {
  it.each([
    [[...RUN, '--format', 'pdf'], 'ctxsim: --format: "pdf" is not one of "csv", "json", "md", "html"'],
    [[...RUN, '--cache', 'maybe'], 'ctxsim: --cache: "maybe" is not one of "auto", "off"'],
    [['table', ...SMALL, '--format', 'html'], 'ctxsim: --format: "html" is not one of "md", "csv"'],
    [['cache', 'bogus'], 'ctxsim: cache: "bogus" is not one of "info", "clear"'],
  ])('%j → one line naming the flag and the value', async (args, line) => {
    await expectUsage(args, line);
  });

  it('two bad flags are two lines, one each', async () => {
    const r = await cli(...RUN, '--format', 'pdf', '--cache', 'maybe');
    expect(r.err).toBe('ctxsim: --format: "pdf" is not one of "csv", "json", "md", "html"\nctxsim: --cache: "maybe" is not one of "auto", "off"\n');
    expect(r.code).toBe(2);
  });
});

describe('a whole-number flag', () => {
  it.each([
    [[...RUN, '--seed', 'abc'], 'ctxsim: --seed: expected a whole number, got "abc"'],
    [[...RUN, '--seed', '1.5'], 'ctxsim: --seed: expected a whole number, got 1.5'],
    [[...RUN, '--seed', '99999999999999999999'], 'ctxsim: --seed: expected a whole number from -9007199254740991 to 9007199254740991, got 99999999999999999999'],
    // Too large for a whole number ctxsim can hold: the range says why, not "≥ 1", which the value is.
    [[...RUN, '--jobs', '99999999999999999999'], 'ctxsim: --jobs: expected a whole number from 1 to 9007199254740991, got 99999999999999999999'],
    [[...RUN, '--jobs', 'abc'], 'ctxsim: --jobs: expected a whole number ≥ 1, got "abc"'],
    [[...RUN, '--jobs', '0'], 'ctxsim: --jobs: expected a whole number ≥ 1, got 0'],
    [[...RUN, '--jobs', '2', '--jobs', 'x'], 'ctxsim: --jobs: expected a whole number ≥ 1, got "x"'],
    [['generate', '--profile', 'support', '--count', 'abc'], 'ctxsim: --count: expected a whole number from 1 to 100000, got "abc"'],
    [['generate', '--profile', 'support', '--seed', ''], 'ctxsim: --seed: expected a whole number, got ""'],
    [['explain', SCENARIO, '--policy', 'full', '--turn', 'abc'], 'ctxsim: --turn: expected a whole number, got "abc"'],
    [['explain', SCENARIO, '--policy', 'full', '--turn', '0'], /^ctxsim: --turn: expected a turn from 1 to \d+, got 0$/],
  ])('%j → the value as typed', async (args, line) => {
    await expectUsage(args, line);
  });

  it('given twice is refused with both values', async () => {
    await expectUsage([...RUN, '--seed', '1', '--seed', '2'], 'ctxsim: --seed: give --seed once (got 1, 2)');
  });

  it('takes a negative seed, and its default', async () => {
    const seeded = await cli('generate', '--profile', 'support', '--count', '1', '--seed', '-5');
    expect(seeded.err).toBe('');
    expect(seeded.out).toContain('--seed -5');
    const plain = await cli('generate', '--profile', 'support', '--count', '1');
    expect(plain.out).toContain('--seed 42');
  });
});

describe('an unknown model names the flag that gave it', () => {
  it.each([
    [[...RUN, '--model', 'nope'], /^ctxsim: --model: unknown model "nope" \(closest: /],
    [[...RUN, '--policy', 'facts:extractModel=nope-4'], /^ctxsim: --policy facts:extractModel=nope-4: unknown model "nope-4" \(closest: /],
    [['explain', SCENARIO, '--policy', 'full', '--turn', '1', '--model', 'nope'], /^ctxsim: --model: unknown model "nope" \(closest: /],
    [['explain', SCENARIO, '--policy', 'summary:summaryModel=nope-3', '--turn', '1'], /^ctxsim: --policy summary:summaryModel=nope-3: unknown model "nope-3" \(closest: /],
    // A pipeline's stages name models too, checked before the run whether or not a call would use them.
    [[...RUN, '--policy', 'pipeline:stages=mask-observations > summary-buffer:summaryModel=nope-5'], /^ctxsim: --policy pipeline:stages=mask-observations > summary-buffer:summaryModel=nope-5: unknown model "nope-5" \(closest: /],
  ])('%j', async (args, line) => {
    await expectUsage(args, line);
  });

  it("a pipeline stage's model in a study is named at its policy entry", async () => {
    const study = join(tempDir(), 'study.yaml');
    writeFileSync(study, `seed: 1\nscenarios: [${SCENARIO}]\npolicies:\n  - pipeline: {stages: "mask-observations > summary:summaryModel=nope-6"}\n`);
    await expectUsage(['run', study, '--no-token-cache', '--out', '-'], new RegExp(`^ctxsim: ${study.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:5 policies\\[0\\]: unknown model "nope-6" \\(closest: `));
  });
});

describe('a price table that does not parse', () => {
  it('is one line: the file, where the text breaks, and the first problem, named as the price table', async () => {
    const dir = tempDir();
    const cut = join(dir, 'cut.json');
    // The first 5,000 bytes of a LiteLLM table stop inside a string: the parser finds three problems where the text ends.
    const text = readFileSync(join(ROOT, 'src', 'pricing', 'builtin-prices.json'), 'utf8').slice(0, 5000);
    writeFileSync(cut, text);
    const lines = text.split('\n');
    const end = `${lines.length}:${lines[lines.length - 1]!.length + 1}`;
    const expected = new RegExp(`^ctxsim: \\S*cut\\.json:${end}: price table: Missing closing "quote$`);
    await expectUsage([...RUN, '--prices', cut], expected);
    await expectUsage(['prices', '--prices', cut], expected);
  });
});

describe('a policy parameter given twice in one spec', () => {
  it('is refused, not the last value taken (the variant was named with both)', async () => {
    expect(policyFromString('window-turns:turns=1,turns=2')).toBe('policy spec "window-turns:turns=1,turns=2": parameter turns is given twice');
    await expectUsage([...RUN.filter((a) => a !== 'full' && a !== '--policy'), '--policy', 'window-turns:turns=1, turns=2'], 'ctxsim: --policy window-turns:turns=1, turns=2: policy spec "window-turns:turns=1, turns=2": parameter turns is given twice');
  });
});

describe('a whole-number policy parameter', () => {
  it('is refused beyond Number.MAX_SAFE_INTEGER, where it would no longer be the number typed', () => {
    expect(policyFromString('window-turns:turns=99999999999999999999')).toBe(
      'policy window-turns: parameter turns: expected a whole number ≤ 9007199254740991, got "99999999999999999999"',
    );
    expect(policyFromString('window-turns:turns=9007199254740992')).toMatch(/expected a whole number ≤ 9007199254740991/);
    const max = policyFromString('window-turns:turns=9007199254740991');
    expect(typeof max === 'string' ? max : max.map((v) => v.name)).toEqual(['window-turns:turns=9007199254740991']);
  });

  it('is refused on the command line with one line', async () => {
    await expectUsage(
      ['run', ...SMALL.slice(0, 2), '--policy', 'window-turns:turns=99999999999999999999', '--no-token-cache', '--quiet', '--out', '-'],
      'ctxsim: --policy window-turns:turns=99999999999999999999: policy window-turns: parameter turns: expected a whole number ≤ 9007199254740991, got "99999999999999999999"',
    );
  });
});

describe('a flag mistyped', () => {
  it('is named with the flag a typo or two away that the command takes; a required one, with the flag typed for it', async () => {
    await expectUsage([...RUN, '--quite'], 'ctxsim: Unknown argument: quite (did you mean --quiet?)');
    await expectUsage([...RUN, '--min-retenion', '90%'], 'ctxsim: Unknown argument: min-retenion (did you mean --min-retention?)');
    await expectUsage(['check', '--basline', 'b.json'], 'ctxsim: Unknown argument: basline (did you mean --baseline?)');
    await expectUsage(['generate', '--profle', 'support'], 'ctxsim: Missing required argument: profile (is --profle a typo of --profile?)');
    // Two letters swapped are one typo; a mistyped command is named with the command.
    await expectUsage(['explain', SCENARIO, '--trun', '3', '--policy', 'full'], 'ctxsim: Missing required argument: turn (is --trun a typo of --turn?)');
    await expectUsage(['rnu'], 'ctxsim: unknown command "rnu" (did you mean run?)');
    await expectUsage(['chekc'], 'ctxsim: unknown command "chekc" (did you mean check?)');
    // Nothing near: as yargs says it.
    await expectUsage([...RUN, '--zzzzzz'], 'ctxsim: Unknown argument: zzzzzz');
    await expectUsage(['zzzz'], 'ctxsim: Unknown argument: zzzz');
  });
});

describe('a value that starts with a minus', () => {
  it('is not read as short options: the line names the word and how to write it, and written so, the flag refuses it by name', async () => {
    await expectUsage([...RUN, '--min-retention', '-5%'], "ctxsim: -5%: a word that starts with a minus is read as options; if it is --min-retention's value, join the two: --min-retention=-5%");
    await expectUsage([...RUN, '--cache-ttl', '-5m'], "ctxsim: -5m: a word that starts with a minus is read as options; if it is --cache-ttl's value, join the two: --cache-ttl=-5m");
    await expectUsage([...RUN, '--min-retention=-5%'], 'ctxsim: --min-retention: a share of the probed facts is at least 0%, got -5%');
    // An unknown flag is still said as yargs says it, and a negative number is a value.
    await expectUsage([...RUN, '--bogus'], 'ctxsim: Unknown argument: bogus');
    await expectUsage([...RUN, '--jobs', '-3'], 'ctxsim: --jobs: expected a whole number ≥ 1, got -3');
  });
});
