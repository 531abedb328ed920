/**
 * The test projects (vitest.config.ts), decided from what a test file's
 * text shows it does, so a new file lands in one with no list to edit:
 *
 * - `cli`: it needs the built package (`npm run build`): it starts a child
 *   process (the built CLI, `npm pack`, Chromium) or a worker thread, reads
 *   `dist/`, or runs a user's policy module (which runs on a thread of the
 *   built package), as the project `ctxsim init` makes does;
 * - `oracle`: otherwise, it holds ctxsim to an outside reference: real
 *   data under `../shared/data` (the `test/_shared.ts` helpers that skip
 *   when it is absent), the reference token counts of
 *   `test/fixtures/tokens/`, made by other tokenizers, or the open-weight
 *   tokenizers and chat templates themselves (`OPEN_WEIGHTS`: optional
 *   packages of other projects, whose rendering ctxsim's must match);
 * - `unit`: everything else, in this process, with no build: the default.
 *
 * The unit project's setup (`test/_unit-setup.ts`) fails a unit file that
 * starts a process or a worker thread anyway (through a helper, say).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';

export type TestProject = 'unit' | 'cli' | 'oracle';

/** Why a file's text puts it in a project, each with the words a test report gives. */
export const RULES: readonly { project: Exclude<TestProject, 'unit'>; pattern: RegExp; why: string }[] = [
  { project: 'cli', pattern: /['"`](node:)?child_process['"`]/, why: 'starts a child process' },
  { project: 'cli', pattern: /['"`](node:)?worker_threads['"`]/, why: 'starts a worker thread' },
  { project: 'cli', pattern: /['"`]playwright(-core)?['"`]/, why: 'drives a browser (a child process)' },
  { project: 'cli', pattern: /['"`/]dist['"`/]/, why: 'reads the built package (dist/)' },
  { project: 'cli', pattern: /\b(runBuilt|builtSince)\b/, why: 'runs the built CLI, or checks it is fresh' },
  { project: 'cli', pattern: /from '\.\/_hostile-module\.js'/, why: 'runs hostile policy modules through the built CLI (test/_hostile-module.ts)' },
  // A line naming a `.mjs` or `.cjs` file it does not import itself (nor a script): a policy module (or a record encoder) given to ctxsim.
  { project: 'cli', pattern: /^(?!.*\bimport\(|.*\bfrom '|.*scripts\/).*\.[mc]js['"`]/m, why: 'runs a JavaScript module of its own (a policy module) on a thread of the built package' },
  // `cli('init', dir)`, `runMain(['init', …])`: the project init makes names its example policy module.
  { project: 'cli', pattern: /[([]\s*'init',/, why: 'runs the project ctxsim init makes, whose study names a policy module' },
  { project: 'oracle', pattern: /\b(sharedData|describeShared|itShared)\(/, why: 'reads real data under ../shared/data' },
  { project: 'oracle', pattern: /fixtures\/tokens\//, why: 'compares with reference token counts (test/fixtures/tokens/)' },
  // The names used, not written in quotes (a list of exported names holds them as text).
  { project: 'oracle', pattern: /(?<!['"`])\b(OPEN_WEIGHTS|OPEN_WEIGHT_NAMES|sourcePackages)\b(?!['"`])/, why: 'holds ctxsim to the open-weight tokenizers and chat templates of other projects (optional packages, skipped when absent)' },
];

/** The project of a test file, from its text: the first project a rule of which matches (cli before oracle), else unit. */
export function projectOf(text: string): TestProject {
  for (const project of ['cli', 'oracle'] as const) if (RULES.some((r) => r.project === project && r.pattern.test(text))) return project;
  return 'unit';
}

/** The test files below `dir` (`test/`, at any depth) in each project but unit, as paths from the repository's root. */
export function projectFiles(dir: string, base = 'test'): Record<Exclude<TestProject, 'unit'>, string[]> {
  const out: Record<Exclude<TestProject, 'unit'>, string[]> = { cli: [], oracle: [] };
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.test.ts'));
  for (const f of files.map((n) => n.split(sep).join('/')).sort()) {
    const project = projectOf(readFileSync(join(dir, f), 'utf8'));
    if (project !== 'unit') out[project].push(`${base}/${f}`);
  }
  return out;
}
