import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { charts } from '../src/report/charts.js';
import { reportHtml } from '../src/report/html.js';
import { renderCharts } from '../src/report/outputs.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { memorySink } from '../src/output/sinks.js';
import { PACKAGE_DIR } from '../src/process.js';
import { policiesFromFlags } from '../src/study/study.js';
import { fixtureRun, PRICE_DATE } from './fixtures/report/run.js';
import { tempDir } from './_tmp.js';

/**
 * Opens report.html in headless Chromium, driven by playwright-core, and uses
 * it as a reader would: the page loads with nothing logged and nothing
 * requested but itself; every chart is drawn live; hovering a point of
 * retention vs cost shows its policy, model, cost, retention and upkeep, as
 * the budget table prints them; clicking a legend entry hides that policy
 * (or, where models share a plot, that model), and a second click shows it
 * again; at 1280 pixels nothing is wider than the page. Takes a full-page
 * screenshot (kept at $CTXSIM_SCREENSHOT if set).
 *
 * Chromium is Debian's (`apt-get install chromium`; .ci/run installs it), or
 * the one $CTXSIM_CHROMIUM names: playwright-core drives it and downloads
 * no browser of its own. Without either, the tests are skipped and say why.
 */

function findChromium(): string | undefined {
  if (process.env.CTXSIM_CHROMIUM) return process.env.CTXSIM_CHROMIUM;
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  for (const c of ['chromium', 'chromium-browser']) {
    const found = spawnSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim()) return found.stdout.trim();
  }
  return undefined;
}

const chromiumPath = findChromium();
const playwright = await import('playwright-core').catch(() => undefined);
const reason = !chromiumPath
  ? 'no Chromium found (Debian: apt-get install chromium; or set CTXSIM_CHROMIUM): skipping the headless check of report.html'
  : !playwright
    ? 'playwright-core is not installed (a devDependency: npm ci installs it): skipping the headless check of report.html'
    : undefined;
if (reason) console.warn(reason);

/** Chromium's flags for a closed network: no background connections, no first-run work. */
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--hide-scrollbars'];

/** How long a click's or a hover's effect may take to show, on a busy machine. */
const POLL = { timeout: 10_000 };

/** A model whose id is as long as they come: provider, region, vendor, name, date, version. */
const LONG_MODEL = 'bedrock/us-gov-east-1/anthropic.claude-3-haiku-20240307-v1:0';

/** The golden study's scenarios (kavya, noah), and the long chat of the fixture study when `long`, on `models` with `policies`, chars4. */
async function goldenScenarios(models: string[], policies: string[], long = false) {
  const { output } = await runStudyPipeline(
    {
      seed: 42,
      models,
      tokenizer: 'chars4',
      prices: 'builtin',
      promptCache: 'auto',
      promptCacheTtl: 300,
      scenarios: [
        { kind: 'glob', pattern: 'scenarios/{kavya-late-order,noah-amnesia}.yaml', base: PACKAGE_DIR },
        ...(long ? [{ kind: 'glob' as const, pattern: 'test/fixtures/report/maya-long-support.yaml', base: PACKAGE_DIR }] : []),
      ],
      policies: policiesFromFlags(policies),
      out: 'reports',
      cacheFolder: false,
      jobs: 1,
    },
    memorySink(),
  );
  return { results: output.results, info: { ...output.info, priceDate: PRICE_DATE } };
}

/** What a page said and asked for while it was open. */
interface Opened {
  page: Page;
  url: string;
  console: string[];
  requests: string[];
}

describe.skipIf(reason !== undefined)('report.html in headless Chromium', () => {
  let browser: Browser;
  // Made here, when the tests are collected, so that it is removed after them (not when skipped: nothing is made).
  const dir = reason === undefined ? tempDir() : '';

  /** Writes report.html for a run and opens it at 1280 × 900, waiting until every chart is drawn live. */
  async function open(name: string, run: Awaited<ReturnType<typeof fixtureRun>>): Promise<Opened> {
    const file = join(dir, `${name}.html`);
    writeFileSync(file, reportHtml(run.results, run.info, await renderCharts(charts(run.results, run.info))));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const opened: Opened = { page, url: pathToFileURL(file).href, console: [], requests: [] };
    page.on('console', (m) => void (m.type() === 'error' || m.type() === 'warning' ? opened.console.push(`${m.type()}: ${m.text()}`) : undefined));
    page.on('pageerror', (e) => void opened.console.push(`page error: ${e.message}`));
    page.on('request', (r) => void opened.requests.push(r.url()));
    await page.goto(opened.url);
    // Every chart drawn, or given up on (and said why on the console, which the first test reads).
    await page.waitForFunction(() => document.querySelectorAll('figure[data-chart]:not(.is-live):not(.not-live)').length === 0, undefined, { timeout: 30_000 });
    return opened;
  }

  /** The opacity each matching item of a live chart is drawn with. */
  const opacities = (page: Page, chart: string, selector: string) =>
    page.locator(`#chart-${chart} .live ${selector}`).evaluateAll((items) => items.map((i) => i.getAttribute('opacity')));

  /** Clicks a legend entry of a live chart by its label, with the pointer away from any mark first. */
  async function clickLegend(page: Page, chart: string, label: string): Promise<void> {
    await page.mouse.move(1, 1);
    await page
      .locator(`#chart-${chart} .live .role-legend-label text`, { hasText: new RegExp(`^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) })
      .click({ timeout: 10_000 });
  }

  let one: Opened;
  let two: Opened;
  let wide: Opened;

  beforeAll(async () => {
    browser = await playwright!.chromium.launch({ executablePath: chromiumPath, args: FLAGS });
    one = await open('one-model', await fixtureRun());
    // Two models on the golden study's scenarios: panels per model, and a legend of models in tokens by turn.
    two = await open('two-models', await goldenScenarios(['gpt-4o-mini', 'claude-haiku-4-5'], ['full', 'window-turns:turns=2', 'summary']));
    // Long names — a model's id with its provider and region, policies with their parameters — and a long chat (a column of tokens for each of turns 1, 5, 10 and 20).
    wide = await open('wide', await goldenScenarios([LONG_MODEL, 'gpt-4o-mini'], ['full', 'window-tokens:budget=40', 'summary-buffer:budget=2000,keepRecent=4', 'window-turns:turns=2', 'facts'], true));
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('loads with no console error or warning, requests nothing but itself, and draws every chart live', async () => {
    for (const o of [one, two, wide]) {
      expect(o.console).toEqual([]);
      expect(o.requests).toEqual([o.url]);
      const figures = await o.page.locator('figure').evaluateAll((fs) =>
        fs.map((f) => {
          const svg = f.querySelector('.live svg');
          const r = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
          return { id: f.id, live: f.classList.contains('is-live'), static: !!f.querySelector('.static'), width: r.width, height: r.height, marks: svg ? svg.querySelectorAll('path, line, rect, text').length : 0 };
        }),
      );
      expect(figures.map((f) => f.id)).toEqual(['retention-vs-cost', 'cost-by-turn', 'tokens-by-turn', 'retention-by-age', 'cost-breakdown'].map((n) => `chart-${n}`));
      for (const f of figures) {
        expect([f.id, f.live, f.static], f.id).toEqual([f.id, true, false]);
        expect(f.width, f.id).toBeGreaterThan(100);
        expect(f.height, f.id).toBeGreaterThan(100);
        expect(f.marks, f.id).toBeGreaterThan(10);
      }
      // At 1280 pixels the page is no wider than the window: wide tables scroll in their own box.
      const width = await o.page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
      expect(width[0]).toBeLessThanOrEqual(width[1]!);
    }
  });

  it('fits its tables in a 1280-pixel window: long names break where they have parts, and only a table with more columns than fit scrolls, in its own box', async () => {
    const { page } = wide;
    const boxes = await page.locator('div.scroll').evaluateAll((ds) => ds.map((d) => ({ table: d.querySelector('table')!.className, scrolls: d.scrollWidth > d.clientWidth, right: d.getBoundingClientRect().right })));
    const main = await page.locator('main').evaluate((m) => m.getBoundingClientRect().right);
    for (const b of boxes) expect(b.right, b.table).toBeLessThanOrEqual(main);
    // The budget table, with the long model id and the policies' parameters, fits without scrolling; so do the others but the per-scenario table's many figures.
    expect(boxes.filter((b) => b.scrolls && b.table !== 'scenarios').map((b) => b.table)).toEqual([]);
    expect(await page.locator('table.budget td', { hasText: LONG_MODEL }).first().evaluate((td) => td.getBoundingClientRect().height)).toBeGreaterThan(30);
  });

  it('shows, on hovering a point, its policy, model, cost, retention and upkeep, as the budget table prints them', async () => {
    const { page } = one;
    // The budget table's row for full: its cost per 1,000 conversations and its retention.
    const row = await page.locator('table.budget tbody tr', { has: page.locator('td:first-child', { hasText: /^full$/ }) }).locator('td').allTextContents();
    const headers = await page.locator('table.budget thead th').allTextContents();
    const cell = (h: string) => row[headers.indexOf(h)]!;
    await page.locator('#chart-retention-vs-cost .live path[aria-label^="full on gpt-4o-mini:"]').hover();
    const tooltip = page.locator('#vg-tooltip-element.visible');
    await tooltip.waitFor();
    const pairs = await tooltip.locator('tr').evaluateAll((rows) => rows.map((r) => [r.querySelector('.key')!.textContent, r.querySelector('.value')!.textContent]));
    expect(Object.fromEntries(pairs)).toEqual({
      policy: 'full',
      model: 'gpt-4o-mini',
      cost: `${cell('cost / 1,000 conversations')} per 1,000 conversations`,
      retention: cell('retention'),
      upkeep: 'none',
      'upkeep tokens': `${cell('upkeep tokens / conversation')} per conversation`,
      'on the chart': 'the verdict’s pick, Pareto-optimal',
    });
    await page.mouse.move(1, 1);
    await expect.poll(() => page.locator('#vg-tooltip-element.visible').count(), POLL).toBe(0);
  });

  it('hides a policy when its legend entry is clicked, and shows it again on a second click', async () => {
    const { page } = one;
    const full = 'path[aria-label^="full on gpt-4o-mini:"]';
    const others = 'path[aria-label*=" on gpt-4o-mini:"]:not([aria-label^="full on"])';
    expect(await opacities(page, 'retention-vs-cost', full)).toEqual(['1']);
    await clickLegend(page, 'retention-vs-cost', 'full');
    await expect.poll(() => opacities(page, 'retention-vs-cost', full), POLL).toEqual(['0']);
    expect(new Set(await opacities(page, 'retention-vs-cost', others))).toEqual(new Set(['1']));
    // Its label goes with it, and its legend entry fades.
    expect(await page.locator('#chart-retention-vs-cost .live text', { hasText: /^full \(pick\)$/ }).getAttribute('opacity')).toBe('0');
    expect(Number(await page.locator('#chart-retention-vs-cost .live .role-legend-label text', { hasText: /^full$/ }).getAttribute('opacity'))).toBeLessThan(1);
    await clickLegend(page, 'retention-vs-cost', 'full');
    await expect.poll(() => opacities(page, 'retention-vs-cost', full), POLL).toEqual(['1']);

    // A line of cost by turn, likewise.
    const line = 'path[aria-label*="Policy: full;"]';
    await clickLegend(page, 'cost-by-turn', 'full');
    await expect.poll(() => opacities(page, 'cost-by-turn', line), POLL).toEqual(['0']);
    expect(new Set(await opacities(page, 'cost-by-turn', 'path[aria-label*="Policy: window"]'))).toEqual(new Set(['1']));
  });

  it('with two models, hides a policy in every panel and a model where the models share a plot', async () => {
    const { page } = two;
    // A panel per model in retention vs cost: full is hidden in both.
    await clickLegend(page, 'retention-vs-cost', 'full');
    await expect.poll(() => opacities(page, 'retention-vs-cost', 'path[aria-label^="full on "]'), POLL).toEqual(['0', '0']);
    // Tokens by turn dashes the models in one plot: its legend of models hides one.
    const claude = 'path[aria-label*="Model: claude-haiku-4-5;"]';
    const mini = 'path[aria-label*="Model: gpt-4o-mini;"]';
    expect(await opacities(page, 'tokens-by-turn', claude)).toEqual(['1', '1', '1']);
    await clickLegend(page, 'tokens-by-turn', 'claude-haiku-4-5');
    await expect.poll(() => opacities(page, 'tokens-by-turn', claude), POLL).toEqual(['0', '0', '0']);
    expect(await opacities(page, 'tokens-by-turn', mini)).toEqual(['1', '1', '1']);
    expect(two.console).toEqual([]);
  });

  it('takes a full-page screenshot', async () => {
    const shot = join(dir, 'report.png');
    await one.page.screenshot({ path: shot, fullPage: true });
    if (process.env.CTXSIM_SCREENSHOT) copyFileSync(shot, process.env.CTXSIM_SCREENSHOT);
    expect(existsSync(shot)).toBe(true);
  });
});

if (reason !== undefined) {
  describe('report.html in headless Chromium', () => {
    it.skip(reason, () => undefined);
  });
}
