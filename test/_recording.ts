import { copyFileSync, cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * What the tests that record upkeep through a local server
 * (test/_openai-server.ts) share: a project folder holding the scenarios and
 * a study whose upkeep is recorded from that server. Made in a test, the
 * folder goes when the test finishes; made in a `beforeAll`, after the
 * file's tests, so a recording that no test changes is made once a file.
 */

/** The upkeep fixture: one conversation whose summaries, extractions and embeddings the server answers. */
export const UPKEEP_SCENARIO = join(ROOT, 'test', 'fixtures', 'upkeep', 'scenario.yaml');
/** The shipped scenarios. */
const SHIPPED = join(ROOT, 'scenarios');

/** The study lines of a recording of the memories: a summary, a fact sheet and retrieval over the fixture scenario, each asking upkeep of the server. */
export const MEMORY_STUDY = ['scenarios: [scenario.yaml]', 'policies:', '  - summary: {threshold: 120, summaryTokens: 60}', '  - facts', '  - retrieval: {topK: 2, recent: 1}'] as const;

/** The study's `upkeep:` line: recorded from `url`, with `keys` (`concurrency: 1, retries: 0`) after the mode and address. */
export function upkeepLine(url: string, keys = ''): string {
  return `upkeep: {mode: record, baseURL: '${url}'${keys ? `, ${keys}` : ''}}`;
}

/**
 * A folder with `study.yaml` of these lines (a study's lines are where its
 * errors point) and its scenarios: the upkeep fixture as `scenario.yaml`, or
 * the shipped scenarios under `scenarios/`. A fresh folder unless `dir`
 * names one.
 */
export function recordingProject(study: readonly string[], scenarios: 'fixture' | 'shipped' = 'fixture', dir = tempDir()): string {
  if (scenarios === 'fixture') copyFileSync(UPKEEP_SCENARIO, join(dir, 'scenario.yaml'));
  else cpSync(SHIPPED, join(dir, 'scenarios'), { recursive: true });
  writeFileSync(join(dir, 'study.yaml'), [...study, ''].join('\n'));
  return dir;
}
