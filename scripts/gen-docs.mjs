#!/usr/bin/env node
/**
 * Writes the generated docs pages from what they describe (as built in
 * dist/): docs/policy-parameters.md from the policies' parameter schemas,
 * docs/columns.md from the record registries.
 *
 *   npm run gen:docs
 *
 * test/policies-docs.test.ts and test/records-columns.test.ts fail when a
 * committed page differs.
 */
import { writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { policyParametersMarkdown } from '../dist/policies/docs.js';
import { columnsMarkdown } from '../dist/records/docs.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
for (const [page, markdown] of [
  ['docs/policy-parameters.md', policyParametersMarkdown],
  ['docs/columns.md', columnsMarkdown],
]) {
  const target = resolve(ROOT, page);
  writeFileSync(target, markdown());
  console.log(`wrote ${relative(ROOT, target)}`);
}
