import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { policyParametersMarkdown } from '../src/policies/docs.js';
import { DOCS_COMMAND } from '../src/text/markdown.js';
import { POLICIES } from '../src/policies/index.js';
import { ROOT } from './_shared.js';

describe('docs/policy-parameters.md', () => {
  const committed = readFileSync(join(ROOT, 'docs/policy-parameters.md'), 'utf8');

  it(`is what the policies' schemas give now (regenerate with ${DOCS_COMMAND})`, () => {
    expect(committed).toBe(policyParametersMarkdown());
  });

  it('has a table per policy and the common parameters, read from the schemas', () => {
    expect(committed.split('\n')[0]).toBe(`<!-- Generated from the policies' parameter schemas by scripts/gen-docs.mjs (${DOCS_COMMAND}); do not edit. -->`);
    expect([...committed.matchAll(/^## (.+)$/gm)].map((m) => m[1])).toEqual([...POLICIES.map((p) => `\`${p.id}\``), 'Common parameters']);
    expect(committed).toContain('| `turns` | int | 10 | ≥ 0 | exchanges sent before the current turn |');
    expect(committed).toContain('| `forget` | string | `cascade` | `cascade`, `naive` |');
    expect(committed).toContain('| `keep` | probability | 1 | 0 to 1 |');
    expect(committed).toContain('| `maxAge` | duration | — | `30s`, `5m`, `24h`, `7d`, or seconds |');
  });
});
