#!/usr/bin/env node
/**
 * Writes docs/columns.md, the columns of every record file, from the record
 * registries (src/records/registry.ts, as built in dist/).
 *
 *   npm run gen:docs
 *
 * test/records-columns.test.ts fails when the committed file differs.
 */
import { writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { columnsMarkdown } from '../dist/records/docs.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(ROOT, 'docs/columns.md');
writeFileSync(target, columnsMarkdown());
console.log(`wrote ${relative(ROOT, target)}`);
