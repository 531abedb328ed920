import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous: tests that start the CLI or replay real transcripts must pass on a busy two-core machine too.
    testTimeout: 120_000,
    // Hooks too (vitest's default is 10 s): a beforeEach that runs a study, a beforeAll that records one.
    hookTimeout: 120_000,
    isolate: false,
    // Every core: vitest leaves one free by default, which on two cores is one worker.
    maxWorkers: availableParallelism(),
    globalSetup: ['test/_leftovers.ts'],
  },
});
