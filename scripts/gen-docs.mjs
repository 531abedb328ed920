#!/usr/bin/env node
/**
 * Writes the generated docs pages from what they describe (as built in
 * dist/): docs/policy-parameters.md from the policies' parameter schemas,
 * docs/columns.md from the record registries; and in docs/studies.md, the
 * table of every study key and flag from the settings' specs.
 *
 *   npm run gen:docs
 *
 * test/policies-docs.test.ts, test/records-columns.test.ts and
 * test/study-settings-docs.test.ts fail when a committed page differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { policyParametersMarkdown } from '../dist/policies/docs.js';
import { columnsMarkdown } from '../dist/records/docs.js';
import { withSettingsTable } from '../dist/study/settings-docs.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
for (const [page, markdown] of [
  ['docs/policy-parameters.md', policyParametersMarkdown],
  ['docs/columns.md', columnsMarkdown],
]) {
  const target = resolve(ROOT, page);
  writeFileSync(target, markdown());
  console.log(`wrote ${relative(ROOT, target)}`);
}
const studies = resolve(ROOT, 'docs/studies.md');
writeFileSync(studies, withSettingsTable(readFileSync(studies, 'utf8')));
console.log(`wrote ${relative(ROOT, studies)}`);
