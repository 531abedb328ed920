import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import type { Command } from '../src/cli/_command.js';
import { importerFlags } from '../src/cli/_import-flags.js';
import { settingOfOption } from '../src/cli/_study-options.js';
import { IMPORTERS, importOptions } from '../src/scenario/import/index.js';
import { SETTINGS } from '../src/study/settings.js';
import { GENERATE_SETTINGS } from '../src/study/sources.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';

/**
 * A setting's flag is declared once, in its entry (`SettingMeta.flag`), and
 * every command that takes it takes the option made from that entry
 * (cli/_study-options.ts), whole or in its own words (`settingOption`). A
 * command that declared such a flag by hand would read it on its own, and
 * the two would drift: this fails on it. Every other flag is a command's
 * own, listed below with what it is.
 */

/** The flags commands declare by hand, none a setting: what each is. */
const COMMAND_ONLY: Readonly<Record<string, string>> = {
  // What a command prints, and how.
  format: 'the format of the output (run, table) or of the input (import, check-upkeep)',
  json: 'print the result as JSON (check, check-upkeep)',
  quiet: 'less on stderr: no progress, notes or summary lines (run, check, table); merge: no summary line',
  verbose: 'check: every row, also when it passes',
  wide: 'run, merge: every column of the table they print',
  junit: 'check: also write JUnit XML',
  comment: 'check: also write the pull request comment',
  'save-baseline': 'run: also write a baseline',
  force: 'replace files that exist (run --save-baseline, init)',
  'dry-run': 'run: what a recording would send and cost, nothing sent',
  shard: 'run: one slice of the work',
  // What a tool is asked about.
  turn: 'explain: the turn shown',
  limit: 'check-policy: broken rules before it stops',
  study: 'prices: the study whose settings apply',
  all: 'prices: every model of the table',
  check: 'prices: prices that look wrong',
  observations: 'check-upkeep: the reference extraction',
  'unlogged-prefix': 'import: a stand-in for what a log leaves out',
};

/** Flags a command declares by hand under a setting's flag name, meaning something else: the command, the flag, and what it means there. */
const OTHER_MEANING: Readonly<Record<string, string>> = {
  'run --sort': 'the order of the table run prints on the terminal, which no study key holds (budgetSort orders report.md’s and ctxsim table’s)',
  'merge --sort': 'the order of the table merge prints, as run’s',
  'explain --scenario': 'the id of one conversation of the study, not scenario files',
  'generate --out': 'the folder the generated scenario files go to, not a study’s outputs',
  'import --out': 'the folder the imported scenario files go to, not a study’s outputs',
};

/** What a command's builder declares: each option with its name and object, and its positionals' names. */
async function declared(command: Command<unknown>): Promise<{ options: [string, object][]; positionals: string[] }> {
  const options: [string, object][] = [];
  const positionals: string[] = [];
  const y: unknown = new Proxy(
    {},
    {
      get: (_target, method) => {
        // Not a promise: the builder may be awaited.
        if (method === 'then') return undefined;
        return (...args: unknown[]) => {
          if (method === 'option') options.push([args[0] as string, args[1] as object]);
          else if (method === 'options') options.push(...(Object.entries(args[0] as object) as [string, object][]));
          else if (method === 'positional') positionals.push(args[0] as string);
          else throw new Error(`a builder called yargs' ${String(method)}: teach this test what it declares`);
          return y;
        };
      },
    },
  );
  await command.builder(y as Argv);
  return { options, positionals };
}

/** Every command of the command line, by its name: one file each in src/cli/commands/. */
async function commands(): Promise<Map<string, Command<unknown>>> {
  const found = new Map<string, Command<unknown>>();
  const dir = join(ROOT, 'src', 'cli', 'commands');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')).sort()) {
    const module = (await import(join(dir, file))) as Record<string, (io: unknown) => Command<unknown>>;
    for (const make of Object.values(module)) {
      const command = make(capture());
      found.set(command.command.split(' ')[0]!, command);
    }
  }
  return found;
}

describe('every flag a setting has is declared once, in its entry', () => {
  // The settings inside one (the gate's: `--baseline`, `--max-cost-increase`…) are settings too.
  const flagNames = SETTINGS.flatMap((s) => [s, ...(s.fields ?? [])]).flatMap((s) => (s.meta.flag ? [s.meta.flag.name] : []));
  // generate's flags are a generate source's fields' (GENERATE_SPEC): what a study's generate: entry writes.
  const sourceFlags = GENERATE_SETTINGS.flatMap((s) => (s.meta.flag ? [s.meta.flag.name] : []));

  it('no two settings have the same flag (a command reads a flag by its name)', () => {
    expect(flagNames.filter((n, i) => flagNames.indexOf(n) !== i)).toEqual([]);
  });

  it('every option of every command is made from a setting’s entry, under its flag’s name, or is the command’s own', async () => {
    const importer = new Set(Object.keys(importerFlags(importOptions(IMPORTERS.values()))));
    const byHand: string[] = [];
    const unexplained: string[] = [];
    const used = new Set<string>();
    const all = await commands();
    expect([...all.keys()].sort()).toEqual(['cache', 'calibrate', 'check', 'check-policy', 'check-upkeep', 'explain', 'generate', 'import', 'init', 'merge', 'prices', 'run', 'table']);
    for (const [name, command] of all) {
      for (const [flag, option] of (await declared(command)).options) {
        const made = settingOfOption(option);
        if (made) {
          expect(made.meta.flag?.name, `${name} --${flag}`).toBe(flag);
          continue;
        }
        // The importers' options are made from their own schemas (How to add an importer option).
        if (name === 'import' && importer.has(flag)) continue;
        const other = OTHER_MEANING[`${name} --${flag}`];
        if ((name === 'generate' ? sourceFlags : flagNames).includes(flag) && other === undefined) byHand.push(`${name} --${flag}`);
        else if (COMMAND_ONLY[flag] === undefined && other === undefined) unexplained.push(`${name} --${flag}`);
        used.add(other === undefined ? flag : `${name} --${flag}`);
      }
    }
    // A setting's flag declared by hand: take it from its entry (settingOption, or STUDY_OPTIONS and the other maps).
    expect(byHand).toEqual([]);
    // A flag of a command's own: say what it is in COMMAND_ONLY (or, named as a setting's flag, in OTHER_MEANING).
    expect(unexplained).toEqual([]);
    // The lists hold only what a command declares.
    expect([...Object.keys(COMMAND_ONLY), ...Object.keys(OTHER_MEANING)].filter((k) => !used.has(k))).toEqual([]);
  });

  it('the commands that take a setting’s flag in their own words take it as its entry makes it', async () => {
    const all = await commands();
    const option = async (command: string, flag: string) => new Map((await declared(all.get(command)!)).options).get(flag) as Record<string, unknown>;
    // One of the list the setting holds: text, not repeatable.
    for (const command of ['explain', 'calibrate']) {
      expect(settingOfOption(await option(command, 'model'))?.name, command).toBe('models');
      expect(await option(command, 'model'), command).toMatchObject({ type: 'string' });
      expect(await option(command, 'model'), command).not.toHaveProperty('array');
    }
    expect(await option('run', 'model')).toMatchObject({ type: 'string', array: true });
    expect(settingOfOption(await option('cache', 'token-cache'))?.name).toBe('tokenCache');
    expect(settingOfOption(await option('table', 'columns'))?.name).toBe('budgetColumns');
    expect(settingOfOption(await option('table', 'sort'))?.name).toBe('budgetSort');
    expect(settingOfOption(await option('run', 'sort'))).toBeUndefined();
    // generate's --seed is the generated set's (a generate source's seed), not the run's; its --out is not a study's.
    expect(settingOfOption(await option('generate', 'seed'))).toBe(GENERATE_SETTINGS.find((s) => s.name === 'seed'));
    expect(settingOfOption(await option('generate', 'set'))?.name).toBe('params');
    expect(await option('generate', 'count')).toMatchObject({ default: 10 });
  });
});

/** Flags the docs name that are not ctxsim's: whose each is. */
const NOT_CTXSIM: Readonly<Record<string, string>> = {
  no: 'npx (run the project’s own ctxsim, install nothing)',
  yes: 'npx',
  omit: 'npm ci',
  quick: 'the benchmark script',
  engine: 'the benchmark script',
  'no-allocation-site-pretenuring': 'Node',
  'max-valid-polymorphic-map-count': 'Node',
  'predictable-gc-schedule': 'Node',
};

describe('the flags the docs name', () => {
  it('are each a flag of a command (or its --no- form), so a renamed or removed flag cannot linger in the docs', async () => {
    const flags = new Set(['help', 'version', 'no-cache', ...Object.keys(NOT_CTXSIM)]);
    const importer = Object.keys(importerFlags(importOptions(IMPORTERS.values())));
    for (const command of (await commands()).values()) for (const [flag] of (await declared(command)).options) flags.add(flag);
    for (const flag of [...flags, ...importer]) flags.add(flag).add(`no-${flag}`);
    const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
    const unknown: string[] = [];
    for (const page of pages) {
      // A flag in code: `ctxsim run --policy …`, or alone (`--policy-timeout`); a command line of another tool's is its own.
      const text = readFileSync(join(ROOT, page), 'utf8');
      for (const code of text.matchAll(/`([^`\n]+)`/g)) {
        const span = code[1]!;
        if (/\b(?:npm|node|npx vitest|vitest|tsc|git|valgrind|docker)\b/.test(span) && !/\bctxsim\b/.test(span)) continue;
        for (const m of span.matchAll(/(?:^|\s)--([a-z][a-z0-9-]*)/g)) if (!flags.has(m[1]!)) unknown.push(`${page}: --${m[1]} (in \`${span}\`)`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
