import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { charts } from '../src/report/charts.js';
import { toVega } from '../src/report/compile.js';
import { breakableHtml, escapeHtml, REPORT_CSP, reportHtml, scopeSvgIds } from '../src/report/html.js';
import { renderCharts } from '../src/report/outputs.js';
import { goldenRun } from './fixtures/report/run.js';
import { probe, resultsOf, turn } from './fixtures/report/records.js';

const { results, info } = await goldenRun();
const rendered = await renderCharts(charts(results, info));
const html = reportHtml({ ...results }, { ...info, scenarios: info.scenarios.map((s, i) => (i === 0 ? { ...s, title: 'Late <order> & "socks"' } : s)) }, rendered);
/** The page without its scripts (the Vega runtime's text is not the page's markup). */
const markup = html.slice(0, html.indexOf('<script'));
/** The page's elements `<script …>text</script>`, in order. */
const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => ({ attrs: m[1]!, text: m[2]! }));

describe('report.html', () => {
  it('is one self-contained page: nothing to load, and a policy that forbids loading and allows only its own scripts', () => {
    expect(html.startsWith('<!doctype html>\n')).toBe(true);
    // The runtime and the page's script, each allowed by its hash; the charts' specs are data, not code.
    expect(scripts.map((s) => s.attrs)).toEqual([' type="application/json" id="chart-specs"', '', '', '']);
    const hashes = scripts.slice(1).map((s) => `'sha256-${createHash('sha256').update(s.text).digest('base64')}'`);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}; script-src ${hashes.join(' ')}">`);
    expect(scripts[1]!.text).toContain('vega');
    expect(scripts[2]!.text).toContain('vegaEmbed');
    // Nothing in the markup loads anything.
    expect(markup).not.toMatch(/<script|<link|<img|<iframe|@import|\ssrc=/i);
    expect([...markup.matchAll(/url\(([^)]*)\)/g)].filter((m) => !m[1]!.startsWith('#'))).toEqual([]);
    expect([...markup.matchAll(/href="([^"]*)"/g)].map((m) => m[1]).filter((h) => !h!.startsWith('#'))).toEqual([]);
    // Without charts, no script at all, and the policy allows none.
    const bare = reportHtml(results, info, []);
    expect(bare).not.toContain('<script');
    expect(bare).toContain(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">`);
  });

  it('holds every chart as inline SVG, in order: retention against cost first, under the verdict; and each one’s compiled spec for the live view', () => {
    const figures = [...markup.matchAll(/<figure id="chart-([a-z-]+)" data-chart="([a-z-]+)"[^>]*>\n<div class="static">\n<svg /g)].map((m) => [m[1], m[2]]);
    const names = ['retention-vs-cost', 'cost-by-turn', 'tokens-by-turn', 'retention-by-age', 'cost-breakdown'];
    expect(figures).toEqual(names.map((n) => [n, n]));
    const verdict = html.slice(html.indexOf('<section id="verdict">'), html.indexOf('<section id="budget">'));
    expect(verdict).toContain('<figure id="chart-retention-vs-cost"');
    // The specs: JSON with no '<' (so nothing in it can close its element), each the chart's Vega-Lite spec compiled.
    expect(scripts[0]!.text).not.toContain('<');
    const specs = JSON.parse(scripts[0]!.text);
    expect(Object.keys(specs).sort()).toEqual([...names].sort());
    for (const c of charts(results, info)) expect(specs[c.name], c.name).toEqual(JSON.parse(JSON.stringify(toVega(c.spec))));
  });

  it('has the verdict, the budget table, the latency, storage and safety table, the per-scenario table, the lost facts and, last, the study', () => {
    expect([...markup.matchAll(/<h2>([^<]+)<\/h2>/g)].map((m) => m[1])).toEqual(['Verdict', 'Budget per policy', 'Latency, storage and safety per policy', 'Charts', 'Per scenario', 'Facts not retained', 'Study']);
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
    expect([...lost.replaceAll('<wbr>', '').matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td class="num">(\d+)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td>/g)].map((m) => m.slice(1))).toEqual([
      ['noah-amnesia', 'window-turns:turns=2', '5', 'name', 'missing'],
      ['noah-amnesia', 'window-tokens:budget=40', '5', 'name', 'missing'],
    ]);
  });

  it('escapes what comes from scenario files', () => {
    expect(html).toContain('<td>Late &lt;order&gt; &amp; &quot;socks&quot;</td>');
    expect(escapeHtml(`<a href='x'>&</a>`)).toBe('&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;');
  });

  it('lets a name in a table break where it has parts, so tables narrow before they scroll', () => {
    expect(breakableHtml('window-tokens:budget=500')).toBe('window-tokens:<wbr>budget=500');
    expect(breakableHtml('summary-buffer:budget=2000,keepRecent=4')).toBe('summary-buffer:<wbr>budget=2000,<wbr>keepRecent=4');
    expect(breakableHtml('bedrock/us.anthropic.claude-3-5-haiku-20241022-v1:0')).toBe('bedrock/<wbr>us.<wbr>anthropic.<wbr>claude-3-5-haiku-20241022-v1:0');
    expect(breakableHtml('a <b> & c')).toBe('a &lt;b&gt; &amp; c');
    // Text cells take the breaks; numbers never do.
    expect(html).toContain('<td>window-turns:<wbr>turns=2</td>');
    expect(html).not.toMatch(/<td class="num">[^<]*<wbr>/);
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

describe('report.html, several models', () => {
  // Two policies, each on two models: four policy records.
  const [mini, haiku] = ['gpt-4o-mini', 'claude-haiku-4-5'].map((model) => resultsOf(['p', 'q'].map((policy) => turn({ scenario: 'a', policy, turn: 1, model }))));
  const both = { turns: [...mini!.turns, ...haiku!.turns], probes: [], summary: [...mini!.summary, ...haiku!.summary], policies: [...mini!.policies, ...haiku!.policies], violations: [] };
  const page = reportHtml(both, { ...info, models: [info.models[0]!, { ...info.models[0]!, model: 'claude-haiku-4-5' }] }, []);

  it('counts the policies and the models apart in the caption, not a policy per policy × model', () => {
    expect(page).toMatch(/<p class="caption">[^<]* · 1 conversation × 2 policies × 2 models<\/p>/);
  });
});

describe('report.html scenario list', () => {
  it('writes each weight as the other reports write weights: grouped, at most 3 decimals, never in exponent form', () => {
    const weights = [5e-7, 0.25, 1234.5678, undefined];
    const page = reportHtml(results, { ...info, scenarios: info.scenarios.slice(0, 1).flatMap((s) => weights.map((weight, i) => ({ ...s, id: `s${i}`, ...(weight !== undefined && { weight }) }))) }, []);
    const list = page.slice(page.indexOf('<h3>Scenarios</h3>'));
    // Each row's numeric cells: its turns, then its weight.
    const cells = [...list.matchAll(/<td class="num">([^<]*)<\/td>/g)].map((m) => m[1]).filter((_, i) => i % 2 === 1);
    expect(cells).toEqual(['&lt;0.001', '0.25', '1,234.568', '1']);
    expect(list).not.toMatch(/\de-\d/);
  });
});
