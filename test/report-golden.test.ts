import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { budgetCsv } from '../src/report/budget.js';
import { charts } from '../src/report/charts.js';
import { specJson } from '../src/report/spec-json.js';
import { reportMarkdown } from '../src/report/markdown.js';
import { renderSvg } from '../src/report/svg.js';
import { PACKAGE_DIR } from '../src/process.js';
import { goldenRun } from './fixtures/report/run.js';

/**
 * Golden files for the small study (shipped kavya/noah scenarios, chars4,
 * three policies), compared byte for byte. `UPDATE_GOLDEN=1 npx vitest run`
 * rewrites them; review the diff before committing.
 */

const DIR = join(PACKAGE_DIR, 'test/golden/report');
const update = process.env.UPDATE_GOLDEN === '1';

function golden(name: string, actual: string): void {
  const file = join(DIR, name);
  if (update) {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  let expected: string;
  try {
    expected = readFileSync(file, 'utf8');
  } catch {
    throw new Error(`missing golden file test/golden/report/${name}: run UPDATE_GOLDEN=1 npx vitest run`);
  }
  expect(actual, `test/golden/report/${name} differs (UPDATE_GOLDEN=1 refreshes it)`).toBe(expected);
}

const { results, info } = await goldenRun();
const list = charts(results, info);

describe('golden report files', () => {
  it('has the five charts in order', () => {
    expect(list.map((c) => c.name)).toEqual(['cost-by-turn', 'tokens-by-turn', 'retention-vs-cost', 'retention-by-age', 'cost-breakdown']);
  });

  for (const c of list) {
    it(`${c.name}.vl.json`, () => golden(`${c.name}.vl.json`, specJson(c.spec)));
  }

  it('report.md', () => golden('report.md', reportMarkdown(results, info, list.map((c) => ({ title: c.title, file: `${c.name}.png` })))));

  it('budget table CSV (ctxsim table --format csv)', () => golden('table.csv', budgetCsv(results)));

  it('cost-by-turn.svg', async () => golden('cost-by-turn.svg', await renderSvg(list[0]!.spec)));

  it('renders the same SVG again, after other charts (clip ids and text widths do not drift)', async () => {
    const first = await renderSvg(list[2]!.spec);
    for (const c of list) await renderSvg(c.spec);
    expect(await renderSvg(list[2]!.spec)).toBe(first);
  });
});
