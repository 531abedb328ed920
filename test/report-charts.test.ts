import * as vega from 'vega';
import { describe, expect, it } from 'vitest';
import { axisEnd, charts, moneyFormat, POLICY_COLORS, retentionVsCostChart, tokensByTurnChart } from '../src/report/charts.js';
import { placeLabels, POINT_RADIUS, spreadPoints } from '../src/report/labels.js';
import { PLOT_HEIGHT, PLOT_WIDTH } from '../src/report/plot.js';
import { verdict, verdictPicks } from '../src/report/verdict.js';
import { costPer1000, usdNumber } from '../src/records/format.js';
import { textWidth } from '../src/report/font.js';
import { paretoOptimal } from '../src/report/pareto.js';
import { renderSvg } from '../src/report/svg.js';
import { toVega } from '../src/report/compile.js';
import { fixtureRun, goldenRun } from './fixtures/report/run.js';
import { probe, resultsOf, turn } from './fixtures/report/records.js';
import { layersOf, notesOf, subtitleOf, valuesOf } from './fixtures/report/spec.js';

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
    // cost-by-turn, tokens-by-turn, retention-vs-cost and retention-by-age: one colour scale each, on the layer that holds the legend.
    expect(scales).toBe(4);
    // The other layers colour by the row's colour as data (no scale, so no second legend): the same colours.
    const hexes = list.flatMap((c) => (c.name.startsWith('retention') ? valuesOf(c.spec).filter((v) => v.hex) : []));
    expect(hexes.length).toBeGreaterThan(0);
    for (const v of hexes) expect(v.hex, v.policy).toBe(expected[v.policy]);
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
        'Cost per 1,000 conversations (USD)',
        'Probed facts retained (%)',
        'Fact age when probed (turns since it was stated)',
        'Mean cost per conversation (USD)',
      ]),
    );
  });

  it('mark the Pareto-optimal policies', () => {
    const points = valuesOf(retentionVsCostChart(results, info).spec).filter((v) => v.kind === 'point');
    const status = new Map(points.map((v) => [v.policy, v.status]));
    const optimal = paretoOptimal(results.policies.map((p) => ({ cost: p.costPerConversation, retention: p.retention! })));
    expect(policies.map((p) => status.get(p))).toEqual(optimal.map((o) => (o ? 'Pareto-optimal' : 'dominated')));
    // full retains 12/12 at the highest cost; window-turns:turns=2 is the cheapest: both on the frontier.
    expect(status.get('full')).toBe('Pareto-optimal');
    expect(status.get('window-turns:turns=2')).toBe('Pareto-optimal');
    expect(status.get('window-turns:turns=6')).toBe('dominated');
  });

  it('leave out the policies without probes, and say how many under the plot', () => {
    const notes = (n: number) => {
      const rows = results.policies.map((p, i) => (i < n ? { ...p, probes: 0, retained: 0, retention: null } : p));
      return notesOf(retentionVsCostChart({ ...results, policies: rows }, info).spec);
    };
    expect(notes(1)).toContain('1 policy without probes not shown');
    expect(notes(2)).toContain('2 policies without probes not shown');
    expect(notes(0).join('\n')).not.toContain('without probes');
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

  it('are not retained in retention by age, and a line under the plot says how many each policy had', () => {
    // p: 1 of 3 retained = 33.3%; q: 1 of 1.
    const values = valuesOf(byAge!.spec);
    expect(values.map((v) => [v.policy, v.retention, v.retained, v.probes])).toEqual([
      ['p', 33.3, 1, 3],
      ['q', 100, 1, 1],
    ]);
    expect(subtitleOf(byAge!.spec)).toEqual(['Share of probes whose current value was in the prompt; a tick at 0 means none was', 'gpt-4o-mini · prices of 2026-01-01 · tokenizer chars4']);
    expect(notesOf(byAge!.spec)).toEqual([note]);
    expect(notesOf(vsCost!.spec)).toContain(note);
  });

  it('add no line when no probe overflowed', () => {
    for (const c of list) expect(JSON.stringify([c.spec.title, notesOf(c.spec)])).not.toContain('context window');
  });
});

describe('retention vs cost agrees with the verdict', () => {
  const spec = retentionVsCostChart(results, info).spec;
  const points = valuesOf(spec).filter((v) => v.kind === 'point');
  const pointOf = (policy: string) => points.find((v) => v.policy === policy)!;

  it('speaks the verdict’s unit, cost per 1,000 conversations, on an axis from 0, and keeps the caveats under the plot', async () => {
    for (const p of results.policies) expect(pointOf(p.policy).cost, p.policy).toBe(usdNumber(costPer1000(p)));
    // The verdict names the frontier's points with the same figures the points' tooltips give.
    const said = verdict(results.policies, info);
    for (const v of points.filter((v) => v.status === 'Pareto-optimal')) expect(said, v.policy).toContain(`${v.policy} (${v.costText.replace(' per 1,000 conversations', '')}`);
    const extent = valuesOf(spec).find((v) => v.kind === 'extent')!;
    expect(extent.x).toBe(axisEnd(Math.max(...points.map((v) => v.cost))));
    expect(layersOf(spec)[0].encoding.x.scale).toEqual({ domainMin: 0, zero: true, nice: false });
    const svg = await renderSvg(spec);
    expect(svg).toMatch(/X-axis titled 'Cost per 1,000 conversations \(USD\)' for a linear scale with values from \$0\.0+ to \$[0-9.]+/);
    // Above the plot: what the points are over, and the caption; every caveat under it, one line each.
    // Retention is of all the probes together (the tables' retained/probes), not a mean of each conversation's.
    expect(subtitleOf(spec)).toEqual(['Cost: mean over 3 conversations; retention: of all their probes together', 'gpt-4o-mini · prices of 2026-01-01 · tokenizer chars4']);
    for (const p of results.policies.filter((r) => r.probes > 0)) expect(points.find((v) => v.policy === p.policy)!.retention, p.policy).toBe(Math.round((p.retained / p.probes) * 1000) / 10);
    expect(notesOf(spec)[0]).toBe('Filled: Pareto-optimal (no other policy is as cheap and retains as much, and better at one); hollow: dominated');
  });

  it('rings and names the verdict’s pick, as the verdict chooses it (and nothing when no policy qualifies)', () => {
    const ringed = (i: typeof info) => {
      const s = retentionVsCostChart(results, i).spec;
      const values = valuesOf(s);
      return {
        points: values.filter((v) => v.kind === 'point' && v.pick).map((v) => v.policy),
        labels: values.filter((v) => v.kind === 'label' && v.bold).map((v) => v.text),
        ring: layersOf(s).some((l) => l.mark.size === 480),
        note: notesOf(s).includes('Ringed: the verdict’s pick'),
      };
    };
    const pick = verdictPicks(results.policies, info)[0]!.policy;
    expect(verdict(results.policies, info)).toMatch(new RegExp(`^Use ${pick}: `));
    expect(ringed(info)).toEqual({ points: [pick], labels: [`${pick} (pick)`], ring: true, note: true });
    // A threshold that the cheapest policy meets moves the pick there, in the verdict and the chart alike.
    const cheapest = [...results.policies].sort((a, b) => Number(costPer1000(a) - costPer1000(b)))[0]!;
    const lower = { ...info, minRetention: cheapest.retention! };
    expect(cheapest.policy).not.toBe(pick);
    expect(verdictPicks(results.policies, lower).map((p) => p.policy)).toEqual([cheapest.policy]);
    expect(ringed(lower)).toEqual({ points: [cheapest.policy], labels: [`${cheapest.policy} (pick)`], ring: true, note: true });
    // A saving under minSaving is not worth it: the verdict says use full, and the chart rings full.
    const immaterial = { ...lower, minSaving: 0.99 };
    expect(verdictPicks(results.policies, immaterial).map((p) => p.policy)).toEqual(['full']);
    expect(verdict(results.policies, immaterial)).toMatch(/^Use full: no memory policy pays off at this length/);
    expect(ringed(immaterial).points).toEqual(['full']);
    expect(ringed({ ...info, minRetention: 1.01 })).toEqual({ points: [], labels: [], ring: false, note: false });
  });

  it('shows on hover a point’s policy, model, cost, retention and upkeep, as the tables print them', () => {
    const layer = layersOf(spec).find((l) => l.params)!;
    expect(layer.encoding.tooltip.map((t: { field: string; title: string }) => `${t.field}:${t.title}`)).toEqual([
      'policy:policy',
      'model:model',
      'costText:cost',
      'retentionText:retention',
      'upkeepText:upkeep',
      'upkeepTokensText:upkeep tokens',
      'role:on the chart',
    ]);
    const full = pointOf('full');
    expect(full.model).toBe('gpt-4o-mini');
    expect(full.retentionText).toBe('100.0% (12/12)');
    expect(full.upkeepText).toBe('none');
    expect(full.upkeepTokensText).toBe('0 per conversation');
    expect(full.role).toContain(full.status);
  });

  it('draws points that would cover each other side by side, each with its label, and says so', () => {
    // a and b cost the same and keep the same: one spot.
    const same = resultsOf(
      ['a', 'b', 'c'].map((policy) => turn({ scenario: 's', policy, turn: 1, costInput: policy === 'c' ? 9_000_000n : 5_000_000n })),
      ['a', 'b', 'c'].map((policy) => probe({ scenario: 's', policy, turn: 1, outcome: 'retained' })),
    );
    const s = retentionVsCostChart(same, info).spec;
    const [a, b, c] = ['a', 'b', 'c'].map((p) => valuesOf(s).find((v) => v.kind === 'point' && v.policy === p)!);
    expect([a!.cost, a!.retention]).toEqual([b!.cost, b!.retention]);
    expect(b!.px - a!.px).toBeCloseTo(2 * POINT_RADIUS, 1);
    expect(a!.py).toBe(b!.py);
    // The pair straddles the true spot; c, alone, is where it is.
    const end = valuesOf(s).find((v) => v.kind === 'extent')!.x;
    expect((a!.px + b!.px) / 2).toBeCloseTo((a!.cost / end) * PLOT_WIDTH, 1);
    expect(c!.px).toBeCloseTo((c!.cost / end) * PLOT_WIDTH, 1);
    expect(valuesOf(s).filter((v) => v.kind === 'label').map((v) => v.text).sort()).toEqual(['a (pick)', 'b', 'c']);
    expect(notesOf(s)).toContain('Points that would cover each other are drawn side by side; the tables give their exact figures');
    expect(notesOf(retentionVsCostChart(results, info).spec).join('\n')).not.toContain('side by side');
  });
});

describe('spreading points apart', () => {
  const domain: [number, number] = [0, 100];
  it('puts two on a line, three on a ring, two radii apart, and leaves a lone point where it is', () => {
    const out = spreadPoints([{ x: 50, y: 50 }, { x: 50, y: 50 }, { x: 50.1, y: 50 }, { x: 10, y: 10 }], domain, domain);
    const px = (p: { x: number; y: number }) => ({ x: (p.x / 100) * PLOT_WIDTH, y: PLOT_HEIGHT - (p.y / 100) * PLOT_HEIGHT });
    const drawn = out.map(px);
    for (const [i, j] of [[0, 1], [0, 2], [1, 2]] as const) expect(Math.hypot(drawn[i]!.x - drawn[j]!.x, drawn[i]!.y - drawn[j]!.y)).toBeGreaterThan(2 * POINT_RADIUS - 1e-6);
    expect(out.map((p) => p.moved)).toEqual([true, true, true, false]);
    expect(out[3]).toEqual({ x: 10, y: 10, moved: false });
    const pair = spreadPoints([{ x: 20, y: 20 }, { x: 20, y: 20 }], domain, domain);
    expect(px(pair[0]!).y).toBeCloseTo(px(pair[1]!).y, 9);
    expect(px(pair[1]!).x - px(pair[0]!).x).toBeCloseTo(2 * POINT_RADIUS, 9);
  });
});

describe('axis ends', () => {
  it('are a round number at least 4% past the largest value', () => {
    expect(axisEnd(6.0649)).toBe(8);
    expect(axisEnd(47.1331)).toBe(50);
    expect(axisEnd(0.0416)).toBe(0.05);
    expect(axisEnd(100)).toBe(120);
    expect(axisEnd(0)).toBe(1);
  });
});

describe('interaction', () => {
  it('lets a click on the policy legend hide a policy in every chart that colours by policy, and hides nothing in the SVG', async () => {
    for (const c of list.filter((c) => c.name !== 'cost-breakdown')) {
      const holders = layersOf(c.spec).filter((l) => l.params);
      expect(holders.map((l) => l.params), c.name).toEqual([[{ name: 'hide_policy', select: { type: 'point', fields: ['policy'], toggle: 'true' }, bind: 'legend' }]]);
      expect(holders[0].encoding.color.legend.encoding.labels.opacity.value.expr, c.name).toContain('hide_policy.policy');
      expect(JSON.stringify(holders[0].encoding.opacity), c.name).toContain('"param":"hide_policy"');
    }
    const svg = await renderSvg(list[2]!.spec);
    const points = [...svg.matchAll(/<path [^>]*aria-label="([^"]*) on gpt-4o-mini: [^"]*"[^>]*>/g)];
    expect(points).toHaveLength(policies.length);
    for (const [p] of points) expect(p).not.toMatch(/opacity="0"/);
  });
});
