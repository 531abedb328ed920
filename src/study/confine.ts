import { existsSync, lstatSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { isWithin, realPath } from '../output/real-path.js';

/**
 * Where a study file may reach: the files it names that are written (its
 * `out`, its upkeep cassette) or run (its policy modules) lie in its own
 * folder or below the working folder. Reaching elsewhere takes the command
 * line (`--out`, `--cassette`, `--policy PATH`). Paths are compared as the
 * system would follow them — every symbolic link on the way resolved, for
 * the part that exists — so neither `..` nor a link leads out.
 */

/** Whether `path` (absolute), as the system would follow it, lies in one of `roots` (real paths, as `studyRoots` gives them). */
export function insideRoots(path: string, roots: readonly string[]): boolean {
  const real = realPath(path);
  return roots.some((root) => isWithin(real, root));
}

/**
 * The git work tree that holds folder `dir`: the nearest folder up from it
 * with a `.git` (a folder, or the file of a worktree or a submodule), as a
 * real path; undefined when there is none. A CI job may run in a subfolder
 * of the checkout it gates.
 */
export function checkoutOf(dir: string): string | undefined {
  for (let d = realPath(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return undefined;
  }
}

/** Where a study in folder `dir` may write and load from: its folder and the working folder, as real paths. */
export function studyRoots(dir: string, cwd = process.cwd()): readonly string[] {
  return [realPath(dir), realPath(cwd)];
}

/**
 * Why a path a study names (absolute) lies outside `roots`, or undefined when
 * it is inside. `flag` is the command-line flag that reaches there instead;
 * `what` says what the study does with it ("writes", "loads").
 */
export function outsideProblem(path: string, roots: readonly string[], what: string, flag: string): string | undefined {
  const real = realPath(path);
  if (roots.some((root) => isWithin(real, root))) return undefined;
  const via = real === path ? '' : ` (it leads to ${real})`;
  return `${path}${via} is outside the study's folder and the working folder: a study file ${what} only below them; ${flag} on the command line reaches anywhere`;
}

/**
 * The folder a command writes when no `--out` names one (`reports/` in the
 * working folder), refused when, as the system follows it, it leads out of
 * the working folder: a checkout may ship `reports` as a link elsewhere.
 */
export function defaultOutFolder(name: string, cwd = process.cwd()): string {
  const path = resolve(cwd, name);
  const real = realPath(path);
  if (isWithin(real, realPath(cwd))) return path;
  throw new UsageError(`${name}/, the default output folder, leads to ${real}, outside the working folder: a command writes there only when --out names it`);
}

/** The study files a command looks for in the working folder when none is named, the first found used. */
export const FOLDER_STUDY_FILES: readonly string[] = ['ctxsim.yaml', 'study.yaml'];

/**
 * The study in the working folder: the first of `FOLDER_STUDY_FILES`
 * present there (a link, even one that leads nowhere, is present), as its
 * name; undefined when neither is. The folder may be a pull request's
 * checkout: a link in its place that leads out of the working folder is
 * refused, as a study names only what lies below it, so what runs is what
 * the checkout holds. What is found is read as a study file named on the
 * command line is (a folder or a FIFO of that name: one line, exit 2).
 */
export function folderStudyFile(cwd = process.cwd()): string | undefined {
  for (const name of FOLDER_STUDY_FILES) {
    const path = join(cwd, name);
    let link: boolean;
    try {
      link = lstatSync(path).isSymbolicLink();
    } catch {
      continue;
    }
    const real = link ? realPath(path) : path;
    if (link && !isWithin(real, realPath(cwd))) {
      throw new UsageError(`${name}, the study in the working folder, leads to ${real}, outside it: name the study on the command line to run it`);
    }
    return name;
  }
  return undefined;
}
