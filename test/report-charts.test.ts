import * as vega from 'vega';
import { describe, expect, it } from 'vitest';
import { charts, moneyFormat, POLICY_COLORS, retentionVsCostChart, tokensByTurnChart } from '../src/report/charts.js';
import { placeLabels } from '../src/report/labels.js';
import { PLOT_WIDTH } from '../src/report/plot.js';
import { textWidth } from '../src/report/font.js';
import { paretoOptimal } from '../src/report/pareto.js';
import { renderSvg, toVega } from '../src/report/svg.js';
import { fixtureRun, goldenRun } from './fixtures/report/run.js';
import { probe, resultsOf, turn } from './fixtures/report/records.js';

const { results, info } = await fixtureRun();
const list = charts(results, info);
const policies = results.policies.map((p) => p.policy);

/** Every value under `v` with its key path. */
function* walk(v: unknown, path = ''): Generator<[string, unknown]> {
  yield [path, v];
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) yield* walk(x, `${path}.${k}`);
}

describe('chart specs', () => {
  it('inline their data: no URL anywhere but the schema', () => {
    for (const c of list) {
      const urls = [...walk(c.spec)].filter(([p, v]) => /\.url$/.test(p) || (typeof v === 'string' && /^https?:/.test(v) && p !== '.$schema'));
      expect(urls, c.name).toEqual([]);
      expect([...walk(c.spec)].some(([p]) => /\.data\.values$/.test(p)), c.name).toBe(true);
    }
  });

  it('give each policy the same colour in every chart', () => {
    const expected = Object.fromEntries(policies.map((p, i) => [p, POLICY_COLORS[i]]));
    let scales = 0;
    for (const c of list) {
      for (const [, v] of walk(c.spec)) {
        const s = v as { domain?: unknown[]; range?: unknown[] };
        if (s && Array.isArray(s.domain) && Array.isArray(s.range) && s.domain.join() === policies.join() && typeof s.range[0] === 'string') {
          scales++;
          expect(Object.fromEntries(s.domain.map((d, i) => [d, s.range![i]]))).toEqual(expected);
        }
      }
    }
    // cost-by-turn, tokens-by-turn, retention-vs-cost (two point layers), retention-by-age (bar and tick).
    expect(scales).toBe(6);
  });

  it('compile without a Vega-Lite warning and have titles, subtitles with the caption, and axis titles with units', () => {
    for (const c of list) {
      expect(() => toVega(c.spec)).not.toThrow();
      const title = c.spec.title as { text: string; subtitle: string[] };
      expect(title.text).toBe(c.title);
      expect(title.subtitle.at(-1)).toBe('gpt-4o-mini · prices of 2026-01-01 · tokenizer chars4');
    }
    const axisTitles = [...walk(list)].filter(([p, v]) => /\.(x|y)\.title$/.test(p) && typeof v === 'string').map(([, v]) => v);
    expect(new Set(axisTitles)).toEqual(
      new Set([
        'Turn',
        'Cumulative cost per conversation (USD)',
        'Input tokens sent (prompt, incl. cached)',
        'Cost per conversation (USD)',
        'Probed facts retained (%)',
        'Fact age when probed (turns since it was stated)',
        'Mean cost per conversation (USD)',
      ]),
    );
  });

  it('mark the Pareto-optimal policies', () => {
    const spec = retentionVsCostChart(results, info).spec as unknown as { layer: { data: { values: { policy: string; status: string }[] } }[] };
    const status = new Map(spec.layer[1]!.data.values.concat(spec.layer[2]!.data.values).map((v) => [v.policy, v.status]));
    const optimal = paretoOptimal(results.policies.map((p) => ({ cost: p.costPerConversation, retention: p.retention! })));
    expect(policies.map((p) => status.get(p))).toEqual(optimal.map((o) => (o ? 'Pareto-optimal' : 'dominated')));
    // full retains 12/12 at the highest cost; window-turns:turns=2 is the cheapest: both on the frontier.
    expect(status.get('full')).toBe('Pareto-optimal');
    expect(status.get('window-turns:turns=2')).toBe('Pareto-optimal');
    expect(status.get('window-turns:turns=6')).toBe('dominated');
  });

  it('leave out the policies without probes, and say how many', () => {
    const subtitle = (n: number) => {
      const rows = results.policies.map((p, i) => (i < n ? { ...p, probes: 0, retained: 0, retention: null } : p));
      return (retentionVsCostChart({ ...results, policies: rows }, info).spec as { title: { subtitle: string[] } }).title.subtitle;
    };
    expect(subtitle(1)).toContain('1 policy without probes not shown');
    expect(subtitle(2)).toContain('2 policies without probes not shown');
    expect(subtitle(0).join('\n')).not.toContain('without probes');
  });

  it('draw the context limit only when the tokens come within half of it', () => {
    const rule = (limit: number | null) => JSON.stringify(tokensByTurnChart(results, { ...info, models: [{ ...info.models[0]!, maxInputTokens: limit }] }).spec).includes('context limit');
    // full peaks at 3,268 tokens (turn 40: the long chat alone reaches it); half of 6,536 is 3,268.
    expect(rule(128_000)).toBe(false);
    expect(rule(6_536)).toBe(true);
    expect(rule(6_537)).toBe(false);
    expect(rule(null)).toBe(false);
  });

  it('say so when nothing was probed', () => {
    const none = resultsOf([turn({ scenario: 'a', policy: 'p', turn: 1, inputTokens: 10, costInput: 10n })]);
    for (const c of charts(none, info).filter((c) => c.name.startsWith('retention'))) {
      expect(JSON.stringify(c.spec)).toContain('No fact was probed in this study');
    }
  });

  it('format money axes with enough decimals for neighbouring ticks to differ', () => {
    expect(moneyFormat(0.003)).toBe('$,.4f');
    expect(moneyFormat(0.000062)).toBe('$,.6f');
    expect(moneyFormat(12.5)).toBe('$,.2f');
    expect(moneyFormat(0)).toBe('$,.2f');
  });
});

describe('point labels', () => {
  it('share one label for coinciding points and keep labels apart', () => {
    const labels = placeLabels(
      [
        { x: 1, y: 50, text: 'a', first: true },
        { x: 1.001, y: 50, text: 'b', first: false },
      ],
      [0, 2],
      [0, 100],
    );
    expect(labels.map((l) => l.text)).toEqual(['a', 'b']);
    // b would sit on a's label at the right; it moves (left, or off the line with a leader).
    expect(labels[1]!.align === 'right' || labels[1]!.leader !== undefined).toBe(true);
  });

  it('put a label left of a point at the right edge', () => {
    const [l] = placeLabels([{ x: 2, y: 50, text: 'window-tokens:budget=300', first: true }], [0, 2], [0, 100]);
    expect(l!.align).toBe('right');
    expect(textWidth('window-tokens:budget=300', 11)).toBeLessThan(PLOT_WIDTH);
  });
});

describe('SVG rendering', () => {
  it('measures text with the chart font, not a guess, and is the same every time', async () => {
    const { results: r, info: i } = await goldenRun();
    const spec = charts(r, i)[4]!.spec;
    const a = await renderSvg(spec);
    expect((vega as unknown as { textMetrics: { width: unknown; estimateWidth: unknown } }).textMetrics.width).not.toBe(
      (vega as unknown as { textMetrics: { estimateWidth: unknown } }).textMetrics.estimateWidth,
    );
    expect(await renderSvg(spec)).toBe(a);
    expect(a.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(a).toContain('window-tokens:budget=40');
  });
});

describe('probes on calls over the context window', () => {
  // p: three probes of age 1 — retained, overflow, overflow; q: one retained probe of age 1.
  const over = resultsOf(
    [turn({ scenario: 'a', policy: 'p', turn: 1 }), turn({ scenario: 'a', policy: 'p', turn: 2, overflow: true }), turn({ scenario: 'a', policy: 'q', turn: 1 })],
    [
      probe({ scenario: 'a', policy: 'p', turn: 1, outcome: 'retained' }),
      probe({ scenario: 'a', policy: 'p', turn: 2, outcome: 'overflow' }),
      probe({ scenario: 'a', policy: 'p', turn: 2, fact: 'city', outcome: 'overflow' }),
      probe({ scenario: 'a', policy: 'q', turn: 1, outcome: 'retained' }),
    ],
  );
  const [, , vsCost, byAge] = charts(over, info);
  const note = 'Over the context window (the call would be rejected): not retained — p 2 probes';

  it('are not retained in retention by age, and a subtitle line says how many each policy had', () => {
    // p: 1 of 3 retained = 33.3%; q: 1 of 1.
    const values = (byAge!.spec as { data: { values: { policy: string; retention: number; retained: number; probes: number }[] } }).data.values;
    expect(values.map((v) => [v.policy, v.retention, v.retained, v.probes])).toEqual([
      ['p', 33.3, 1, 3],
      ['q', 100, 1, 1],
    ]);
    expect((byAge!.spec.title as { subtitle: string[] }).subtitle).toEqual(['Share of probes whose current value was in the prompt; a tick at 0 means none was', note, 'gpt-4o-mini · prices of 2026-01-01 · tokenizer chars4']);
    expect((vsCost!.spec.title as { subtitle: string[] }).subtitle).toContain(note);
  });

  it('add no line when no probe overflowed', () => {
    for (const c of list) expect(JSON.stringify(c.spec.title)).not.toContain('context window');
  });
});
