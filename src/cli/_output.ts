import { accessSync, constants, existsSync, statSync, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { UsageError } from '../errors.js';
import { formatOfPath, type OutputFormat } from '../report/outputs.js';
import { checkFileTarget } from '../output/files.js';
import { displayPath } from '../output/display.js';
import { isWithin, linkOnTheWay, realPath } from '../output/real-path.js';
import { reasonOf } from './_io.js';

/**
 * Where a command's output goes (`--out`), checked before the study runs so
 * that a bad target fails at once: `run`'s folder, file or stdout, the
 * folder `merge`, `generate` and `import` write, and the files written
 * beside the reports (`--save-baseline`, `--junit`).
 */

/** Where a run's output goes: a folder of every file, one file, or stdout. */
export type Target = { kind: 'dir'; dir: string } | { kind: 'file'; path: string; format: OutputFormat } | { kind: 'stdout'; format: OutputFormat };

/**
 * `--out -` (or `--format` without `--out`) is stdout; `--format` or a known
 * extension makes `--out` one file; otherwise it is a folder. The target is
 * checked before the run: a file where a folder is needed, a device, a
 * folder that cannot be written, an unknown extension. `stdout`: whether
 * the command may write its output there (`check` prints its verdict).
 */
export function outputTarget(out: string, rawOut: string | undefined, format: OutputFormat | undefined, stdout = true, fail?: Fail): Target {
  if (rawOut === '-' || (rawOut === undefined && format)) return { kind: 'stdout', format: format ?? 'csv' };
  const shown = rawOut ?? displayPath(out);
  const blame = fail ?? flagFail('--out', shown);
  const isDir = existsSync(out) && statSync(out).isDirectory();
  const asFolder = isDir || /[\\/]$/.test(rawOut ?? '');
  let target: Target;
  if (format) {
    if (asFolder) throw new UsageError(`--format ${format}: names the format of one output file, but --out ${shown} is a folder`);
    target = { kind: 'file', path: out, format };
  } else {
    const byExtension = asFolder ? undefined : formatOfPath(out);
    const ext = asFolder ? undefined : /\.([a-z][a-z0-9]*)$/i.exec(basename(out))?.[1];
    if (!byExtension && ext !== undefined && !existsSync(out)) {
      blame(`unknown file type .${ext}; name a file ending in ${ACCEPTED}${stdout ? ', - for stdout,' : ''} or a folder (end it with /)`);
    }
    target = byExtension ? { kind: 'file', path: out, format: byExtension } : { kind: 'dir', dir: out };
  }
  checkWritable(target, blame);
  return target;
}

/** Throws the error of an output that cannot be written as asked, given its reason: a flag's, or a study key's (its `out`). */
export type Fail = (reason: string) => never;

/** The `Fail` of a flag's value (`--out reports`): a usage error naming both. */
export function flagFail(flag: string, shown: string): Fail {
  return (reason) => {
    throw new UsageError(`${flag} ${shown}: ${reason}`);
  };
}

/** The extensions `--out` takes for one file. */
const ACCEPTED = '.csv, .json, .md (.markdown), .html (.htm)';

/** Refuses an output folder that cannot be made or written (for commands that write one folder: `what` it holds). */
export function checkOutputFolder(dir: string, shown: string, what = 'the reports'): void {
  checkWritable({ kind: 'dir', dir }, flagFail('--out', shown), false, what);
}

/**
 * Refuses a file written beside the reports (`flag` is `--save-baseline` or
 * `--junit`) that cannot be written: not a regular file, a file on its path,
 * a folder that cannot be written. Checked before the run, so a long run is
 * not lost to a typo, and its reports are not written without it.
 */
export function checkOutputFile(path: string, flag: string, shown: string): void {
  // `resolve` drops the slash: `--junit reports/` would write a file named reports.
  if (/[\\/]$/.test(shown)) throw new UsageError(`${flag} ${shown}: ends with /, which names a folder; name a file`);
  // Something there that is not a file (a device, a FIFO, a folder) is named as every writer names it.
  if (statOf(path)) checkFileTarget(path);
  checkWritable({ kind: 'file', path, format: 'json' }, flagFail(flag, shown), true);
}

/**
 * Refuses an output file that is one of the run's inputs (`inputs`,
 * absolute: `studyInputs`, a baseline), by `fail`: a report, a
 * baseline or a JUnit file written over the study file, a scenario or the
 * baseline it compares with would destroy what it was made of.
 */
export function refuseInput(path: string, inputs: readonly string[], fail: Fail): void {
  const real = realPath(path);
  if (inputs.some((i) => realPath(i) === real)) fail('is read by this command (the study, a scenario, a dataset or its annotations, the price table, the cassette or the baseline), which an output never replaces: name another file');
}

/**
 * Refuses two outputs of one command named to the same file (`--junit
 * a.md --out a.md`): the one written last would replace the other without
 * a word. Each is `[flag, as typed, absolute path]`; an absent one is undefined.
 */
export function refuseSameFile(outputs: readonly (readonly [flag: string, shown: string, path: string] | undefined)[]): void {
  const seen = new Map<string, string>();
  for (const o of outputs) {
    if (!o) continue;
    const [flag, shown, path] = o;
    const other = seen.get(realPath(path));
    if (other) throw new UsageError(`${flag} ${shown}: ${other} names the same file; each output needs a file of its own`);
    seen.set(realPath(path), flag);
  }
}

/** What is at `path`, or undefined when nothing is (a file on the way is found when the loop above gets to it). */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
}

/** Refuses an output path that cannot be written as asked: named in the message, with the reason. */
function checkWritable(target: Target, fail: Fail, oneFile = true, what = 'the reports'): void {
  if (target.kind === 'stdout') return;
  const path = target.kind === 'dir' ? target.dir : target.path;
  leadsOut(target.kind === 'dir' ? path : dirname(path), fail);
  const stat = statOf(path);
  if (stat && target.kind === 'dir' && !stat.isDirectory()) {
    fail(`${stat.isFile() ? 'is a file' : 'is not a folder (a device or special file)'}; ${what} need a folder${oneFile ? ` (or name one file ending in ${ACCEPTED})` : ''}`);
  }
  if (stat && target.kind === 'file' && !stat.isFile()) fail('is not a regular file (a device or special file); name a file or a folder');
  // The folder that will hold the output: the folder itself, or the nearest one that exists above it.
  let dir = target.kind === 'dir' && stat ? path : dirname(path);
  let above = statOf(dir);
  while (!above && dirname(dir) !== dir) {
    dir = dirname(dir);
    above = statOf(dir);
  }
  if (above && !above.isDirectory()) fail(`${displayPath(dir)} is a file, not a folder`);
  try {
    accessSync(dir, constants.W_OK);
  } catch (e) {
    fail(`cannot write in ${displayPath(dir)}: ${reasonOf(e as NodeJS.ErrnoException)}`);
  }
}

/**
 * Refuses an output folder (`dir`: the folder written, or the one holding
 * the file written) reached through a symbolic link lying in the working
 * folder that leads out of it: the working folder may be a pull request's
 * checkout, which can ship `ctxsim-reports` as a link to anywhere. A path
 * named outside the working folder, or a link that stays inside it, is
 * written as named.
 */
function leadsOut(dir: string, fail: (reason: string) => never, cwd = process.cwd()): void {
  const link = linkOnTheWay(dir, cwd);
  if (!link) return;
  if (isWithin(realPath(dir), realPath(cwd))) return;
  fail(`${displayPath(link.link)} is a symbolic link in the working folder that leads out of it (to ${link.leadsTo}); an output is never written through one: name the folder it leads to`);
}
