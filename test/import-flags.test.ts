import { readdirSync } from 'node:fs';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { flagOf, importerFlags } from '../src/cli/_import-flags.js';
import { IMPORTERS, importDataset, importOptions, type Importer } from '../src/scenario/import/index.js';
import { hasBilledCalls } from '../src/study/billed.js';
import { IMPORT_FIXTURES, importFixture } from './_import.js';
import { cli } from './_io.js';

/**
 * The `import` command's flags are the importers' options, read from their
 * schemas: each flag names the formats that take it, a boolean has its
 * `--no-` form, and an option of another format is refused by name.
 */

/** `import --help`'s options, flag → description (one line, without yargs' [type] tags). */
async function helpOptions(): Promise<Map<string, string>> {
  const { code, out } = await cli('import', '--help');
  expect(code).toBe(0);
  const block = out.slice(out.indexOf('\nOptions:\n') + '\nOptions:\n'.length, out.indexOf('\n\n', out.indexOf('\nOptions:\n')));
  const options = new Map<string, string>();
  for (const entry of block.split(/\n(?= {2}--)/)) {
    const m = /^ {2}--([a-z-]+)\s+([\s\S]*)$/.exec(entry);
    if (m) options.set(m[1]!, m[2]!.replace(/\s+/g, ' ').replace(/( \[[^\]]*\])+$/, '').trim());
  }
  return options;
}

/** The formats a description names before a colon: `openai, anthropic: …; locomo: …` → openai, anthropic, locomo. */
const formatsNamed = (description: string) => [...description.matchAll(/(?:^|; )([a-z-]+(?:, [a-z-]+)*): /g)].flatMap((m) => m[1]!.split(', '));

const shapeOf = (i: Importer) => (i.options as z.ZodObject).shape as Record<string, z.ZodType>;

describe('import flags from the importers’ option schemas', () => {
  it('every option of every importer is a flag whose help names that importer', async () => {
    const help = await helpOptions();
    const seen: string[] = [];
    for (const importer of IMPORTERS.values()) {
      for (const key of Object.keys(shapeOf(importer))) {
        const described = help.get(flagOf(key));
        expect(described, `--${flagOf(key)}`).toBeDefined();
        expect(formatsNamed(described!), `--${flagOf(key)}`).toContain(importer.id);
        seen.push(`${importer.id} ${key}`);
      }
    }
    // Eight formats, 25 option uses: openai, claude-code, swe-agent, anthropic take prefix, annotations, fact, probe (4 × 4);
    // swe-agent model (1); locomo user, factValue, questions, prefix (4); abcd prefix, system (2); multiwoz prefix, ask (2); sgd prefix (1).
    expect(seen.length).toBe(4 * 4 + 1 + 4 + 2 + 2 + 1);
    expect([...help.keys()]).toEqual(['help', 'version', 'format', 'out', 'prefix', 'annotations', 'fact', 'probe', 'user', 'fact-value', 'questions', 'system', 'ask', 'model', 'unlogged-prefix']);
  });

  it('each flag says what its schema says, for the formats in registry order, with its default', async () => {
    const help = await helpOptions();
    expect(help.get('prefix')).toBe(
      'openai, anthropic: id prefix, before the conversation’s number in the file (default: the file’s name); ' +
        'locomo, abcd, multiwoz, sgd: id prefix, before the conversation’s id in the dataset (default: the format’s id); ' +
        'claude-code, swe-agent: the conversation’s id (default: the file’s name)',
    );
    expect(help.get('fact')).toBe('openai, claude-code, swe-agent, anthropic: name=value for every conversation, placed where the user first says the value (repeatable)');
    expect(help.get('user')).toBe('locomo: the speaker who plays the user; the other is the assistant (default: speaker_a)');
    expect(help.get('system')).toBe('abcd: system prompt for every conversation');
    expect(help.get('ask')).toBe('multiwoz: end with a user turn asking for the booking references, which probes them (default on; --no-ask)');
    expect(help.get('unlogged-prefix')).toMatch(/^claude-code, swe-agent \(the formats whose logs record each call’s billed usage\): add a pinned stand-in/);
    const { out } = await cli('import', '--help');
    expect(out.replace(/\s+/g, ' ')).toContain('[string] [choices: "speaker_a", "speaker_b"]');
    expect(out.replace(/\s+/g, ' ')).toContain('[string] [choices: "text", "answer"]');
    expect(help.get('questions')).toMatch(/^locomo: how the questions are asked: after \(one scenario: the dialogue, then every question as a probe turn of its own with no reply; .* or each \(one scenario per question: the dialogue, then that question alone, .*\(default: after\)$/);
  });

  it('a boolean option takes its --no- form, said in the help when it is on by default', async () => {
    const help = await helpOptions();
    const booleans = importOptions(IMPORTERS.values()).filter((o) => o.kind === 'boolean');
    expect(booleans.map((o) => o.key)).toEqual(['ask']);
    for (const o of booleans) {
      const flag = flagOf(o.key);
      if (o.uses.every((u) => u.default === true)) expect(help.get(flag)).toContain(`--no-${flag}`);
      // Given to a format that lacks it, the --no- form is refused under its own name: yargs read it as this option, false.
      const other = [...IMPORTERS.keys()].find((id) => !o.uses.some((u) => u.format === id))!;
      expect(await cli('import', '--format', other, 'none.json', `--no-${flag}`)).toEqual({ code: 2, out: '', err: `ctxsim: --no-${flag}: not an option of the ${other} format\n` });
    }
    // And it turns the option off: MultiWOZ without the closing question has no probes.
    const asked = importDataset('multiwoz', importFixture('multiwoz-sample.json'));
    const { code, out } = await cli('import', '--format', 'multiwoz', importFixture('multiwoz-sample.json').path, '--no-ask');
    expect(code).toBe(0);
    expect(asked.report.probes).toBe(3);
    expect(out).not.toMatch(/probe:/);
  });

  it('an option of another format is refused in one line, naming the flag and the format (exit 2)', async () => {
    const options = importOptions(IMPORTERS.values());
    let refused = 0;
    for (const o of options) {
      const value = o.kind === 'boolean' ? [] : [o.choices?.[0] ?? (o.kind === 'number' ? '1' : 'x=y')];
      for (const id of IMPORTERS.keys()) {
        if (o.uses.some((u) => u.format === id)) continue;
        const flag = flagOf(o.key);
        // Checked before the file is read: the file need not exist.
        expect(await cli('import', '--format', id, 'none.json', `--${flag}`, ...value)).toEqual({ code: 2, out: '', err: `ctxsim: --${flag}: not an option of the ${id} format\n` });
        refused++;
      }
    }
    // prefix: every format; annotations, fact, probe: 4 lack each; model, user, fact-value, questions, system, ask: 7 each.
    expect(refused).toBe(3 * 4 + 6 * 7);
  });

  it('--unlogged-prefix names the formats whose fixtures record billed usage per call, and only those', () => {
    const fixtures = readdirSync(IMPORT_FIXTURES).filter((f) => !f.endsWith('.facts.yaml'));
    const formatOf = (f: string) => [...IMPORTERS.keys()].find((id) => f.startsWith(id) || (id === 'swe-agent' && f.startsWith('mini-swe-agent')))!;
    const billed = new Set<string>();
    for (const f of fixtures) {
      const format = formatOf(f);
      expect(format, f).toBeDefined();
      if (importDataset(format, importFixture(f)).conversations.some(hasBilledCalls)) billed.add(format);
    }
    expect([...billed].sort()).toEqual(['claude-code', 'swe-agent']);
    expect([...IMPORTERS.values()].filter((i) => i.billedCalls).map((i) => i.id)).toEqual(['claude-code', 'swe-agent']);
  });
});

describe('importOptions: options of one name agree on their type', () => {
  const importer = (id: string, shape: Record<string, z.ZodType>): Importer => ({ id, describe: id, options: z.strictObject(shape), read: () => ({ docs: [], quirks: [] }) });

  it('the registry’s options agree (else the import command could not start)', () => {
    expect(importOptions(IMPORTERS.values()).map((o) => [o.key, o.kind, o.choices ?? null, o.uses.map((u) => u.format).join(',')])).toEqual([
      ['prefix', 'string', null, 'openai,locomo,abcd,multiwoz,claude-code,swe-agent,anthropic,sgd'],
      ['annotations', 'string', null, 'openai,claude-code,swe-agent,anthropic'],
      ['fact', 'strings', null, 'openai,claude-code,swe-agent,anthropic'],
      ['probe', 'strings', null, 'openai,claude-code,swe-agent,anthropic'],
      ['user', 'string', ['speaker_a', 'speaker_b'], 'locomo'],
      ['factValue', 'string', ['text', 'answer'], 'locomo'],
      ['questions', 'string', ['after', 'each'], 'locomo'],
      ['system', 'string', null, 'abcd'],
      ['ask', 'boolean', null, 'multiwoz'],
      ['model', 'string', null, 'swe-agent'],
    ]);
  });

  it('a clash of kinds or of allowed values is an error naming both formats', () => {
    const a = importer('a', { depth: z.string().optional().describe('how deep') });
    const b = importer('b', { depth: z.boolean().default(false).describe('whether deep') });
    expect(() => importOptions([a, b])).toThrow('import option depth: string in a but boolean in b; one flag carries it, so they must agree');
    const c = importer('c', { mode: z.enum(['x', 'y']).default('x').describe('mode') });
    const d = importer('d', { mode: z.enum(['x', 'z']).optional().describe('mode') });
    expect(() => importOptions([c, d])).toThrow('import option mode: one of x|y in c but one of x|z in d');
  });

  it('agreeing options are one flag; an option without a description or of a kind no flag writes is refused', () => {
    const a = importer('a', { depth: z.number().int().default(2).describe('how deep') });
    const b = importer('b', { depth: z.number().optional().describe('how deep') });
    const [depth] = importOptions([a, b]);
    expect(depth).toEqual({ key: 'depth', kind: 'number', uses: [{ format: 'a', describe: 'how deep', default: 2 }, { format: 'b', describe: 'how deep' }] });
    const flag = importerFlags([depth!]).depth!;
    // Defaults differ: said by none. A number is read as given, so that the schema refuses text.
    expect(flag.describe).toBe('a, b: how deep');
    expect([flag.coerce!('3'), flag.coerce!('abc')]).toEqual([3, 'abc']);
    expect(() => importOptions([importer('e', { depth: z.number() })])).toThrow('import format e, option depth: no description (.describe() on its schema)');
    expect(() => importOptions([importer('f', { deep: z.record(z.string(), z.string()).describe('a map') })])).toThrow(/^import format f, option deep: a flag takes text/);
  });
});

describe('the command an imported file names', () => {
  it('is the one that regenerates it: with the options given, quoted for the shell where they need it', async () => {
    const chats = 'test/fixtures/import/openai-chats.jsonl';
    const given = ['--annotations', 'test/fixtures/import/openai-chats.facts.yaml', '--fact', 'city=São Paulo', '--fact', 'plan=pro'];
    const r = await cli('import', '--format', 'openai', chats, ...given);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[1]).toBe(
      "# Imported by: ctxsim import --format openai test/fixtures/import/openai-chats.jsonl --annotations test/fixtures/import/openai-chats.facts.yaml --fact 'city=São Paulo' --fact plan=pro",
    );
    const multiwoz = await cli('import', '--format', 'multiwoz', 'test/fixtures/import/multiwoz-sample.json', '--no-ask', '--prefix', 'mw');
    expect(multiwoz.out.split('\n')[1]).toBe('# Imported by: ctxsim import --format multiwoz test/fixtures/import/multiwoz-sample.json --prefix mw --no-ask');
  });
});
