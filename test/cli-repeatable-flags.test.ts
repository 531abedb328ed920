import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A repeatable flag takes one value per occurrence: a word after it is the
 * command's positional (`ctxsim check --model gpt-4o study.yaml`), and the
 * flag given twice collects both values.
 */

const SCENARIO = join(ROOT, 'test', 'fixtures', 'email-correction.yaml');
const OPENAI = join(ROOT, 'test', 'fixtures', 'import', 'openai-chats.jsonl');

let dir: string;
const study = () => join(dir, 'study.yaml');
const baseline = () => join(dir, 'baseline.json');

beforeEach(() => {
  dir = tempDir('ctxsim-repeat-');
  cpSync(join(ROOT, 'scenarios', 'noah-amnesia.yaml'), join(dir, 'scenarios', 'noah-amnesia.yaml'));
  writeFileSync(study(), ['seed: 7', 'model: gpt-4o-mini', 'scenarios: [scenarios/*.yaml]', 'policies: [full]', 'out: out/', ''].join('\n'));
});

describe('a positional after a repeatable flag', () => {
  it('run --policy full study.yaml runs the study with that policy', async () => {
    const r = await cli('run', '--policy', 'window-turns:turns=1', '--model', 'gpt-4o', study(), '--out', '-', '--format', 'json', '--no-token-cache', '--quiet');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { info: { models: string[] }; results: { policies: { policy: string }[] } };
    expect(JSON.stringify(doc)).toContain('window-turns:turns=1');
    expect(JSON.stringify(doc)).not.toContain('"full"');
  });

  it('check --baseline b.json --model gpt-4o study.yaml checks the study on that model', async () => {
    expect((await cli('run', study(), '--save-baseline', baseline(), '--out', join(dir, 't.csv'), '--quiet')).code).toBe(0);
    // No cache: a unit another test replayed would otherwise be said served, on stderr.
    const r = await cli('check', '--baseline', baseline(), '--model', 'gpt-4o', study(), '--quiet', '--no-token-cache');
    expect(r.err).toBe('');
    expect(r.out).toContain('- model: gpt-4o-mini → gpt-4o');
    expect(r.code).toBe(1);
  });

  it('explain --policy full scenario.yaml explains that scenario', async () => {
    const r = await cli('explain', '--policy', 'full', SCENARIO, '--turn', '2');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toContain(' · full · turn 2 · ');
  });

  it('import --fact … --probe … file imports that file with both flags', async () => {
    const r = await cli('import', '--format', 'openai', '--fact', 'name=Kavya', '--fact', 'order=SE-10423', '--probe', 'last:name,order', OPENAI);
    expect(r.err).not.toContain('unknown');
    expect(r.code).toBe(0);
    expect(r.out).toContain('facts: { name: Kavya, order: SE-10423 }');
    expect(r.out).toContain('probe: [ name, order ]');
  });

  it('check-policy --scenario FILE MODULE checks that module against that scenario', async () => {
    const r = await cli('check-policy', '--scenario', SCENARIO, join(ROOT, 'templates', 'init', 'policies', 'example-policy.mjs'));
    expect(r.err).not.toContain('unknown');
    expect(r.code).toBe(0);
  });
});

describe('a repeated flag', () => {
  it('--model a --model b --policy c --policy d runs every combination', async () => {
    const r = await cli('run', study(), '--model', 'gpt-4o-mini', '--model', 'gpt-4o', '--policy', 'full', '--policy', 'window-turns:turns=1', '--out', '-', '--format', 'csv', '--no-token-cache', '--quiet');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    for (const word of ['gpt-4o-mini', 'gpt-4o,', 'full', 'window-turns:turns=1']) expect(r.out).toContain(word);
  });

  it('--set a=1 --set b=2 gives generate both parameters', async () => {
    const r = await cli('generate', '--profile', 'support', '--count', '1', '--set', 'nope=1', '--set', 'other=2');
    expect(r.code).toBe(2);
    expect(r.err).toContain('nope');
    expect(r.err).toContain('other');
  });

  it('two values after one flag: the second is a positional, refused where the command takes none', async () => {
    const r = await cli('generate', '--profile', 'support', '--set', 'a=1', 'b=2');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/b=2/);
  });
});
