import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { reportOnlyFiles, type ChartStore, type StoredChart } from '../src/report/outputs.js';
import { runStudyPipeline } from '../src/study/pipeline.js';
import { cachedCharts } from '../src/output/chart-store.js';
import { digestSink } from '../src/output/sinks.js';
import { loadStudy } from '../src/study/study.js';
import { capture } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Rendered charts are kept by their spec (in the store's `charts` namespace, for the CLI):
 * a rerun whose charts did not change renders none, and writes the same
 * bytes; a damaged entry is rendered again, with a warning.
 */

async function reported() {
  const dir = tempDir();
  writeFileSync(join(dir, 'study.yaml'), `seed: 7\nscenarios: [${join(ROOT, 'scenarios', 'noah-amnesia.yaml')}]\npolicies: [full, window-turns]\n`);
  const study = Object.assign(await loadStudy(join(dir, 'study.yaml')), { cacheFolder: false as const, jobs: 1 });
  const { output, info } = await runStudyPipeline(study, digestSink());
  return { results: output.results, info };
}

/** A store in memory that counts what it is asked. */
function counting(): ChartStore & { gets: number; sets: number; kept: Map<string, StoredChart> } {
  const kept = new Map<string, StoredChart>();
  const s = {
    gets: 0,
    sets: 0,
    kept,
    get: (spec: string) => (s.gets++, kept.get(spec)),
    set: (spec: string, chart: StoredChart) => (s.sets++, void kept.set(spec, chart)),
  };
  return s;
}

describe('the chart store', () => {
  it('a second report takes every chart from the store and renders none; the files are the same', async () => {
    const { results, info } = await reported();
    const store = counting();
    const first = await reportOnlyFiles(results, info, { charts: store });
    const charts = [...first.keys()].filter((f) => f.endsWith('.svg')).length;
    expect(charts).toBe(5);
    expect([store.gets, store.sets]).toEqual([5, 5]);
    const second = await reportOnlyFiles(results, info, { charts: store });
    expect([store.gets, store.sets]).toEqual([10, 5]);
    expect([...second.keys()]).toEqual([...first.keys()]);
    for (const [name, content] of first) expect(Buffer.from(second.get(name)!).equals(Buffer.from(content)), name).toBe(true);
    // What the store gives is what is written: no rendering stands behind it.
    for (const [spec, chart] of store.kept) store.kept.set(spec, { ...chart, svg: chart.svg.replace('<svg', '<svg data-kept="1"') });
    const third = await reportOnlyFiles(results, info, { charts: store });
    expect([...third].filter(([name, c]) => name.endsWith('.svg') && String(c).includes('data-kept="1"'))).toHaveLength(5);
    // Without PNGs asked for before, a PNG is rendered when asked.
    const svgOnly = counting();
    await reportOnlyFiles(results, info, { charts: svgOnly, png: false });
    const withPng = await reportOnlyFiles(results, info, { charts: svgOnly });
    expect(svgOnly.sets).toBe(10);
    expect(Buffer.from(withPng.get('cost-by-turn.png')!).equals(Buffer.from(first.get('cost-by-turn.png')!))).toBe(true);
  });

  it('in the store: kept across processes by spec; a damaged entry is rendered again with a warning', async () => {
    const { results, info } = await reported();
    const root = join(tempDir(), 'cache');
    const dir = join(root, 'charts');
    const one = cachedCharts(root);
    const first = await reportOnlyFiles(results, info, { charts: one });
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /^[0-9a-f]{2}\/[0-9a-f]{64}$/.test(f));
    expect(files).toHaveLength(5);
    const two = cachedCharts(root);
    const second = await reportOnlyFiles(results, info, { charts: two });
    for (const [name, content] of first) expect(Buffer.from(second.get(name)!).equals(Buffer.from(content)), name).toBe(true);
    expect(two.warnings).toEqual([]);
    writeFileSync(join(dir, files[0]!), 'not an entry');
    const three = cachedCharts(root);
    const third = await reportOnlyFiles(results, info, { charts: three });
    expect(three.warnings).toEqual([`chart cache entry ${join(dir, files[0]!)} is damaged (not a ctxsim cache entry); rendering it again and replacing it`]);
    for (const [name, content] of first) expect(Buffer.from(third.get(name)!).equals(Buffer.from(content)), name).toBe(true);
    expect(readFileSync(join(dir, files[0]!)).subarray(0, 8).toString()).not.toBe('not an e');
  });

  it('ctxsim run keeps them in its cache folder, beside the replayed units', async () => {
    const dir = tempDir();
    const args = ['--scenario', join(ROOT, 'scenarios', 'noah-amnesia.yaml'), '--policy', 'full', '--quiet'];
    const io = capture();
    expect(await runMain(['run', ...args, '--token-cache', join(dir, 'cache'), '--out', join(dir, 'a')], io)).toBe(0);
    // One unit and five charts.
    const entries = (ns: string) => readdirSync(join(dir, 'cache', ns), { recursive: true, encoding: 'utf8' }).filter((f) => /^[0-9a-f]{2}\/[0-9a-f]{64}$/.test(f));
    expect([entries('replay').length, entries('charts').length]).toEqual([1, 5]);
  });
});
