import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { exists, writeFilesAtomic } from '../output/files.js';
import { PACKAGE_DIR } from '../process.js';
import { displayPath } from '../output/display.js';

/** Where the files `ctxsim init` copies live in the package. */
export const INIT_TEMPLATE_DIR = join(PACKAGE_DIR, 'templates', 'init');

/**
 * The files `ctxsim init` writes, relative to the project folder, in the
 * order it lists them: a study, two scenarios it names, a policy of one's
 * own it runs, and a CI workflow that gates pull requests on the study.
 */
export const INIT_FILES: readonly string[] = [
  'study.yaml',
  'scenarios/plant-shop-order.yaml',
  'scenarios/smart-home-scenes.yaml',
  'policies/example-policy.mjs',
  '.github/workflows/ctxsim.yml',
];

export interface ScaffoldOptions {
  /** Replace files that exist (default: refuse, and write nothing). */
  force?: boolean;
}

/**
 * Scaffolds a ctxsim project in `dir` (made if missing): copies the
 * template files. Without `force`, any of them that exists is refused
 * before anything is written, every one named in one line. The files are
 * written all-or-nothing. Returns the paths written, absolute.
 */
export function scaffold(dir: string, options: ScaffoldOptions = {}): string[] {
  const root = resolve(dir);
  if (!options.force) {
    const existing = INIT_FILES.filter((name) => exists(join(root, name)));
    if (existing.length) {
      const shown = existing.map((name) => displayPath(join(root, name)));
      throw new UsageError(`init: ${shown.join(', ')} ${shown.length === 1 ? 'exists' : 'exist'}; add --force to overwrite`);
    }
  }
  const files = new Map(INIT_FILES.map((name) => [name, readFileSync(join(INIT_TEMPLATE_DIR, name))]));
  return writeFilesAtomic(root, files);
}
