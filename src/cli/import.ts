import { resolve } from 'node:path';
import { UsageError, type Problem } from '../errors.js';
import { SourceDoc } from '../text/document.js';
import { formatImportReport, IMPORTERS, importDataset, importerFor, importOptions } from '../scenario/import/index.js';
import { displayPath } from '../output/display.js';
import { addUnloggedPrefixes } from '../study/billed.js';
import { grouped } from '../records/format.js';
import type { ScenarioOut } from '../scenario/docs.js';
import type { Conversation } from '../types.js';
import { flagOf } from './_import-flags.js';
import { shellWord, type IO } from './_io.js';
import { checkScenarioOut, writeScenarios } from './_scenarios.js';
import { flagFail, refuseInput } from './_output.js';

/** The flags of `ctxsim import`: the command's own, and the importers' options by key (`factValue`), as given. */
export interface ImportFlags {
  format: string;
  file: string;
  out?: string;
  unloggedPrefix?: string;
  [option: string]: unknown;
}

/** The flag as it was given: a boolean option turned off was `--no-<name>`. */
function flagName(option: string, value: unknown): string {
  return `--${value === false ? 'no-' : ''}${flagOf(option)}`;
}

/** An option as the flags that give it: `--no-ask`, `--fact a=1 --fact b=2`, `--questions each`. */
function optionWords(key: string, value: unknown): string[] {
  if (typeof value === 'boolean') return [flagName(key, value)];
  const values: unknown[] = Array.isArray(value) ? value : [value];
  return values.map((v) => `--${flagOf(key)} ${shellWord(String(v))}`);
}

/** `ctxsim import`: read, validate every conversation, report quirks on stderr, then write. */
export async function importCmd(flags: ImportFlags, io: IO): Promise<number> {
  checkScenarioOut(flags.out);
  const importer = importerFor(flags.format);
  // The flags that carry an importer's option: any importer's, so that one the format lacks is refused by name below.
  const options: Record<string, unknown> = {};
  for (const { key } of importOptions(IMPORTERS.values())) if (flags[key] !== undefined) options[key] = flags[key];
  const problems: Problem[] = [];
  SourceDoc.fromValue('flags', options).check(importer.options, options, [], problems);
  if (problems.length) {
    throw new UsageError(
      problems
        .map((p) => {
          const key = p.path.split(/[.[]/)[0]!;
          const flag = flagName(key, options[key]);
          return /^unknown key/.test(p.message) ? `${flag}: not an option of the ${importer.id} format` : `${flag}: ${p.message}`;
        })
        .join('; '),
    );
  }
  const path = resolve(flags.file);
  const { docs, conversations, report } = importDataset(importer.id, { path, file: displayPath(path), base: process.cwd() }, options);
  // Sized before anything is printed: a file that cannot be sized is one line.
  const unlogged = flags.unloggedPrefix === 'billed' ? unloggedLines(docs, conversations) : '';
  io.err(formatImportReport(report).join('\n') + '\n' + unlogged);
  // The command that regenerates the files: the options given too (facts from --annotations, --questions each, --prefix… change them).
  const given = [...Object.entries(options).flatMap(([key, value]) => optionWords(key, value)), ...(flags.unloggedPrefix !== undefined ? [`--unlogged-prefix ${shellWord(flags.unloggedPrefix)}`] : [])];
  const header = [`Imported by: ctxsim import --format ${importer.id} ${[shellWord(displayPath(path)), ...given].join(' ')}`];
  // A scenario file written over the dataset or its annotations (`--annotations scenarios/x.yaml --out scenarios`) would lose them.
  if (flags.out !== undefined) {
    const inputs = [path, ...(typeof options.annotations === 'string' ? [resolve(options.annotations)] : [])];
    for (const d of docs) refuseInput(resolve(flags.out, `${d.id}.yaml`), inputs, flagFail('--out', `${flags.out}: ${d.id}.yaml`));
  }
  return writeScenarios(
    docs.map((d) => d.id),
    (i) => docs[i]!,
    header,
    flags.out,
    io,
  );
}

/** `--unlogged-prefix billed`: adds the prefixes (none sized: a usage error); gives the lines that say what was added. */
function unloggedLines(docs: ScenarioOut[], conversations: readonly Conversation[]): string {
  const sized = addUnloggedPrefixes(docs, conversations);
  if (!sized.some((s) => s.prefix)) throw new UsageError('--unlogged-prefix billed: no conversation in the file records billed usage (token usage per model call) to size it from');
  const line = ({ id, prefix: u }: (typeof sized)[number]) =>
    !u
      ? `  ${id}: no billed usage, no prefix added`
      : u.counted === u.billed
        ? `  ${id}: ctxsim counts the first call as billed (${grouped(u.billed)} tokens): the log holds the whole prompt, no prefix needed`
        : u.tokens === 0
          ? `  ${id}: the log holds the whole first prompt (ctxsim counts ${grouped(u.counted)}, billed ${grouped(u.billed)}): no prefix added`
        : `  ${id}: ${grouped(u.tokens)} tokens per call (first call billed ${grouped(u.billed)}, the log holds ${grouped(u.counted)})`;
  return `unlogged prefix, estimated from the bill:\n${sized.map(line).join('\n')}\n`;
}
