import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalName, resolveSpec } from '../src/policies/spec.js';
import { REGISTRY } from '../src/policies/index.js';
import { loadStudy, policyFromString } from '../src/study/study.js';
import { asyncProblems, cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A variant's name does not depend on the order its parameters are written
 * in: they are named in the order the policy declares them. Its random
 * stream is seeded by its name, so both spellings give the same numbers,
 * and both together are one variant listed twice.
 */

const names = (spec: string) => {
  const r = policyFromString(spec);
  if (typeof r === 'string') throw new Error(r);
  return r.map((v) => v.name);
};

const CODING = join(ROOT, 'scenarios', 'coding-help-long.yaml');
const KEEP_EDGES = join(ROOT, 'test', 'fixtures', 'policies', 'keep-edges.mjs');
const COMMON = ['--tokenizer', 'chars4', '--no-token-cache', '--quiet'];

describe('a variant is named by its parameters in declaration order', () => {
  it('whatever order they are written in', () => {
    expect(names('window:budget=500,turns=3')).toEqual(['window:turns=3,budget=500']);
    expect(names('facts:recall=0.5,recent=1')).toEqual(['facts:recent=1,recall=0.5']);
    // The common parameters come after the policy's own.
    expect(names('window-tokens:sessionCap=3,budget=800')).toEqual(['window-tokens:budget=800,sessionCap=3']);
  });

  it('a name already in declaration order is unchanged', () => {
    for (const spec of ['full', 'window:turns=3,budget=500', 'summary-buffer:budget=2000,keepRecent=4', 'window-tokens:budget=800,sessionCap=3,forget=naive']) {
      expect(names(spec)).toEqual([spec]);
    }
  });

  it('a sweep keeps the order of its combinations as written; each is named in declaration order', () => {
    expect(names('window:budget=100|200,turns=2|4')).toEqual([
      'window:turns=2,budget=100',
      'window:turns=4,budget=100',
      'window:turns=2,budget=200',
      'window:turns=4,budget=200',
    ]);
  });

  it('both spellings resolve to the same parameters', () => {
    const [a, b] = ['facts:recall=0.5,recent=1', 'facts:recent=1,recall=0.5'].map((s) => policyFromString(s));
    if (typeof a === 'string' || typeof b === 'string') throw new Error(String(a ?? b));
    expect(a!.map((v) => [v.name, v.params])).toEqual(b!.map((v) => [v.name, v.params]));
  });

  it('canonicalName orders by the policy when given one, and keeps the order given without it', () => {
    const spec = { id: 'window', given: [['budget', 500], ['turns', 3]] as const };
    expect(canonicalName(spec, REGISTRY.get('window')!)).toBe('window:turns=3,budget=500');
    expect(canonicalName(spec)).toBe('window:budget=500,turns=3');
  });

  it('a pipeline names each stage in declaration order', () => {
    expect(names('pipeline:mask-observations:batch=2,keep=5 > summary-buffer:keepRecent=2,budget=3000')).toEqual([
      'pipeline:mask-observations:keep=5,batch=2 > summary-buffer:budget=3000,keepRecent=2',
    ]);
  });
});

describe('a variant name reads back as its variant', () => {
  it('a text value is written in the name as it is: one that holds ",", "|" or ">" (which separate parameters, values and stages), or a space at its ends (trimmed when read back), is refused', () => {
    expect(policyFromString('clear-tool-results:exclude=web_search+read_file')).toMatchObject([{ name: 'clear-tool-results:exclude=web_search+read_file', params: { exclude: 'web_search+read_file' } }]);
    const resolved = (value: string) => {
      const r = resolveSpec(REGISTRY, 'clear-tool-results', [['exclude', value]]);
      return typeof r === 'string' ? r : r.map((v) => v.name);
    };
    expect(resolved('web_search,read_file')).toBe(
      'policy clear-tool-results: parameter exclude: expected text without ",", "|" or ">" and without spaces at its ends (they separate parameters, values and a pipeline\'s stages in a policy\'s name, id:key=value,… > id:…), got "web_search,read_file"',
    );
    expect(resolved('web_search|read_file')).toBe(
      'policy clear-tool-results: parameter exclude: expected text without ",", "|" or ">" and without spaces at its ends (they separate parameters, values and a pipeline\'s stages in a policy\'s name, id:key=value,… > id:…), got "web_search|read_file"',
    );
    // A stage's name holding ">" would be read back as two stages; a space at a value's ends is trimmed when a name is read back.
    for (const value of ['web_search>read_file', ' web_search', 'web_search ']) {
      expect(resolved(value)).toBe(
        `policy clear-tool-results: parameter exclude: expected text without ",", "|" or ">" and without spaces at its ends (they separate parameters, values and a pipeline's stages in a policy's name, id:key=value,… > id:…), got ${JSON.stringify(value)}`,
      );
    }
    expect(resolveSpec(REGISTRY, 'pipeline', [['stages', 'clear-tool-results:exclude=web_search > summary-buffer']])).toMatchObject([{ name: 'pipeline:clear-tool-results:exclude=web_search > summary-buffer' }]);
  });

  it('in a study file, at its entry, as any bad value', async () => {
    const file = join(tempDir(), 'study.yaml');
    writeFileSync(file, [`scenarios: [${JSON.stringify(CODING)}]`, 'policies:', '  - clear-tool-results: {exclude: "web_search,read_file"}', ''].join('\n'));
    expect(await asyncProblems(() => loadStudy(file))).toEqual([
      `${file}:3:5 policies[0]: policy clear-tool-results: parameter exclude: expected text without ",", "|" or ">" and without spaces at its ends (they separate parameters, values and a pipeline's stages in a policy's name, id:key=value,… > id:…), got "web_search,read_file"`,
    ]);
  });
});

describe('on the command line', () => {
  it('both spellings give the same rows', async () => {
    const a = await cli('run', '--scenario', CODING, '--policy', 'facts:recall=0.5,recent=1', ...COMMON, '--out', '-');
    const b = await cli('run', '--scenario', CODING, '--policy', 'facts:recent=1,recall=0.5', ...COMMON, '--out', '-');
    expect([a.code, a.err]).toEqual([0, '']);
    // The numbers first (the random stream of recall=0.5 is seeded by the name), then the names too.
    const unnamed = (csv: string) => csv.replaceAll(/"facts:[^"]*"/g, 'facts');
    expect(unnamed(b.out)).toBe(unnamed(a.out));
    expect(b.out).toBe(a.out);
    expect(a.out.split('\n')[1]).toContain('"facts:recent=1,recall=0.5"');
  });

  it('both spellings together are one policy given twice', async () => {
    const r = await cli('run', '--scenario', CODING, '--policy', 'facts:recall=0.5,recent=1', '--policy', 'facts:recent=1,recall=0.5', ...COMMON, '--out', '-');
    expect([r.code, r.out, r.err]).toEqual([
      2,
      '',
      'ctxsim: --policy facts:recent=1,recall=0.5: policy facts:recent=1,recall=0.5 is given twice (also --policy facts:recall=0.5,recent=1); its totals would count twice\n',
    ]);
  });

  it('so are the two spellings of a policy module', async () => {
    const r = await cli('run', '--scenario', CODING, '--policy', `${KEEP_EDGES}:sessionCap=3,keep=1`, '--policy', `${KEEP_EDGES}:keep=1,sessionCap=3`, ...COMMON, '--out', '-');
    expect([r.code, r.out]).toEqual([2, '']);
    expect(r.err).toContain('policy keep-edges:keep=1,sessionCap=3 is given twice');
  });
});

describe('in a study file', () => {
  function study(policies: string[]): string {
    const file = join(tempDir(), 'study.yaml');
    writeFileSync(file, [`scenarios: [${JSON.stringify(CODING)}]`, 'policies:', ...policies.map((p) => `  - ${p}`), ''].join('\n'));
    return file;
  }

  it('an entry is named in declaration order', async () => {
    const s = await loadStudy(study(['facts: {recall: 0.5, recent: 1}', 'window: {budget: [100, 200], turns: 2}']));
    expect(s.policies.map((p) => p.name)).toEqual(['facts:recent=1,recall=0.5', 'window:turns=2,budget=100', 'window:turns=2,budget=200']);
  });

  it('the two spellings of an entry are one policy listed twice', async () => {
    const file = study([
      'facts: {recent: 1, recall: 0.5}',
      'facts: {recall: 0.5, recent: 1}',
      'window:turns=3,budget=500',
      'window: {budget: 500, turns: 3}',
      'pipeline: [{mask-observations: {keep: 5, batch: 2}}, summary-buffer]',
      'pipeline: [{mask-observations: {batch: 2, keep: 5}}, summary-buffer]',
    ]);
    expect(await asyncProblems(() => loadStudy(file))).toEqual([
      `${file}:4:5 policies[1]: policy facts:recent=1,recall=0.5 is listed twice (also policies[0]); its totals would count twice`,
      `${file}:6:5 policies[3]: policy window:turns=3,budget=500 is listed twice (also policies[2]); its totals would count twice`,
      `${file}:8:5 policies[5]: policy pipeline:mask-observations:keep=5,batch=2 > summary-buffer is listed twice (also policies[4]); its totals would count twice`,
    ]);
  });
});
