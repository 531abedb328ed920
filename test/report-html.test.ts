import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { charts } from '../src/report/charts.js';
import { escapeHtml, REPORT_CSP, reportHtml, scopeSvgIds } from '../src/report/html.js';
import { renderCharts } from '../src/report/outputs.js';
import { goldenRun } from './fixtures/report/run.js';
import { probe, resultsOf, turn } from './fixtures/report/records.js';

const { results, info } = await goldenRun();
const rendered = await renderCharts(charts(results, info));
const html = reportHtml({ ...results }, { ...info, scenarios: info.scenarios.map((s, i) => (i === 0 ? { ...s, title: 'Late <order> & "socks"' } : s)) }, rendered);

describe('report.html', () => {
  it('is one self-contained page: nothing to load, and a policy that forbids loading', () => {
    expect(html.startsWith('<!doctype html>\n')).toBe(true);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">`);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|@import|\ssrc=/i);
    expect([...html.matchAll(/url\(([^)]*)\)/g)].filter((m) => !m[1]!.startsWith('#'))).toEqual([]);
    expect([...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]).filter((h) => !h!.startsWith('#'))).toEqual([]);
  });

  it('holds every chart as inline SVG, in order: retention against cost first, under the verdict', () => {
    const figures = [...html.matchAll(/<figure id="chart-([a-z-]+)"[^>]*>\n<svg /g)].map((m) => m[1]);
    expect(figures).toEqual(['retention-vs-cost', 'cost-by-turn', 'tokens-by-turn', 'retention-by-age', 'cost-breakdown']);
    const verdict = html.slice(html.indexOf('<section id="verdict">'), html.indexOf('<section id="budget">'));
    expect(verdict).toContain('<figure id="chart-retention-vs-cost"');
  });

  it('has the verdict, the budget table, the latency, storage and safety table, the per-scenario table, the lost facts and, last, the study', () => {
    expect([...html.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1])).toEqual(['Verdict', 'Budget per policy', 'Latency, storage and safety per policy', 'Charts', 'Per scenario', 'Facts not retained', 'Study']);
    // The verdict of test/golden/report/report.md, as the page's first paragraph after the caption.
    const md = readFileSync('test/golden/report/report.md', 'utf8');
    const said = md.split('## Verdict\n\n')[1]!.split('\n')[0]!.replace(/\\\$/g, '$');
    expect(html).toContain(`<h2>Verdict</h2>\n<p class="verdict">${escapeHtml(said)}</p>`);
    // As report.md shows it (test/golden/report/report.md): p95 latency, stored bytes (mean, p95), then the safety counts, all zero here.
    const details = html.slice(html.indexOf('<section id="details">'), html.indexOf('<section id="charts">'));
    expect(details).toContain(`<tr><td>full</td><td class="num">485 ms</td><td class="num">249 B</td><td class="num">257 B</td>${'<td class="num">0</td>'.repeat(5)}</tr>`);
    expect(html).toContain('<td>full</td><td class="num">12</td><td class="num">56</td><td class="num">$0.0000416</td>');
    // 2 scenarios × 3 policies in the per-scenario table.
    const scenarios = html.slice(html.indexOf('<section id="scenarios">'), html.indexOf('<section id="lost">'));
    expect(scenarios.match(/<tr><td>/g)).toHaveLength(6);
    // noah-amnesia probes its name at turn 5 (stated at turn 1); both windows have dropped turn 1 by then.
    const lost = html.slice(html.indexOf('<section id="lost">'));
    expect(lost).toContain('2 of 3 probes were not retained (window-turns:turns=2: 1 · window-tokens:budget=40: 1).');
    expect([...lost.matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td class="num">(\d+)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td>/g)].map((m) => m.slice(1))).toEqual([
      ['noah-amnesia', 'window-turns:turns=2', '5', 'name', 'missing'],
      ['noah-amnesia', 'window-tokens:budget=40', '5', 'name', 'missing'],
    ]);
  });

  it('escapes what comes from scenario files', () => {
    expect(html).toContain('<td>Late &lt;order&gt; &amp; &quot;socks&quot;</td>');
    expect(escapeHtml(`<a href='x'>&</a>`)).toBe('&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('keeps inline SVG ids apart between charts', () => {
    const svg = '<svg><clipPath id="clip1"><rect/></clipPath><g clip-path="url(#clip1)"/><use href="#clip1"/></svg>';
    expect(scopeSvgIds(svg, 'cost')).toBe('<svg><clipPath id="cost-clip1"><rect/></clipPath><g clip-path="url(#cost-clip1)"/><use href="#cost-clip1"/></svg>');
  });

  it('is the same on every render', async () => {
    expect(reportHtml(results, info, await renderCharts(charts(results, info)))).toBe(reportHtml(results, info, rendered));
  });
});

describe('report.html, probes on calls over the context window', () => {
  // One conversation, turn 2 over the window: one probe retained at turn 1, one overflow at turn 2.
  const over = resultsOf(
    [turn({ scenario: 'a', policy: 'p', turn: 1 }), turn({ scenario: 'a', policy: 'p', turn: 2, overflow: true })],
    [probe({ scenario: 'a', policy: 'p', turn: 1, outcome: 'retained' }), probe({ scenario: 'a', policy: 'p', turn: 2, outcome: 'overflow' })],
  );
  const page = reportHtml(over, info, []);

  it('counts them apart in the budget and per-scenario tables, and says why each was lost', () => {
    expect(page).toContain('<td class="num">50.0% (1/2, 1 overflowed)</td><td>yes</td><td class="num">0</td><td class="num">1</td></tr>');
    expect(page).toContain('<td class="num">1</td><td class="num">1/2, 1 overflowed</td><td class="num">50.0%</td><td class="num">2</td></tr>');
    expect(page).toContain('<tr><td>a</td><td>p</td><td class="num">2</td><td>name</td><td>overflow</td><td class="num">1</td><td>the call was over the context window</td></tr>');
    expect(page).toContain('<em>overflow</em>: the call was over the model&#39;s context window, so a real backend would have rejected it.</p>');
  });
});
