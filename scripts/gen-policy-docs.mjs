#!/usr/bin/env node
/**
 * Writes docs/policy-parameters.md, the parameter tables of every policy,
 * from the policies' parameter schemas (as built in dist/).
 *
 *   npm run gen:docs
 *
 * test/policies-docs.test.ts fails when the committed file differs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { policyParametersMarkdown } from '../dist/policies/docs.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const target = resolve(ROOT, 'docs/policy-parameters.md');
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, policyParametersMarkdown());
console.log(`wrote ${relative(ROOT, target)}`);
