#!/usr/bin/env node
/**
 * Writes the JSON Schemas of ctxsim's input files, from the zod schemas the
 * loaders check them with (as built in dist/):
 *
 *   schema/scenario.schema.json   scenario files (scenarios/*.yaml, generated, imported)
 *   schema/study.schema.json      study files, each policy with its own parameters
 *
 *   npm run gen:schema
 *
 * test/scenario-schema.test.ts fails when the committed files differ.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarioJsonSchema } from '../dist/scenario/schema.js';
import { studyJsonSchema } from '../dist/study/study.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
for (const [name, schema] of [
  ['scenario.schema.json', scenarioJsonSchema()],
  ['study.schema.json', studyJsonSchema()],
]) {
  const target = resolve(ROOT, 'schema', name);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote ${relative(ROOT, target)}`);
}
