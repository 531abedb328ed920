import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { projectFiles } from './test/_projects.js';

/**
 * Three test projects, each test file in one, decided from what its text
 * shows it does (test/_projects.ts): `unit` (in this process, no build: the
 * default, the inner loop, `npm run test:unit`), `cli` (the built CLI,
 * worker threads, policy modules, the packed package, the docs' outputs,
 * the browser) and `oracle` (real data under ../shared/data, reference
 * token counts). `npm test` builds and runs the three.
 */
const { cli, oracle } = projectFiles(join(import.meta.dirname, 'test'));

const each = {
  // Generous: tests that start the CLI or replay real transcripts must pass on a busy two-core machine too.
  testTimeout: 120_000,
  // Hooks too (vitest's default is 10 s): a beforeEach that runs a study, a beforeAll that records one.
  hookTimeout: 120_000,
  isolate: false,
};

export default defineConfig({
  test: {
    // Every core: vitest leaves one free by default, which on two cores is one worker.
    maxWorkers: availableParallelism(),
    // Once for the whole run: the projects do not inherit it.
    globalSetup: ['test/_leftovers.ts'],
    projects: [
      // A unit test that starts a process or a worker thread anyway fails (test/_unit-setup.ts).
      { test: { ...each, name: 'unit', include: ['test/**/*.test.ts'], exclude: [...cli, ...oracle], setupFiles: ['test/_unit-setup.ts'] } },
      { test: { ...each, name: 'cli', include: cli } },
      { test: { ...each, name: 'oracle', include: oracle } },
    ],
  },
});
