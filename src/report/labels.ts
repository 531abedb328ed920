import { textWidth } from './font.js';
import { PLOT_HEIGHT, PLOT_WIDTH } from './plot.js';

/**
 * Point labels of the retention-vs-cost chart, placed in plot pixels so they
 * overlap neither each other, the points nor the frontier.
 */

/** Font size of point labels, in pixels. */
export const LABEL_FONT_SIZE = 11;

/** A label placed: anchor in data units, alignment, and a leader line when it sits off its point's line. */
export interface PlacedLabel {
  x: number;
  y: number;
  text: string;
  align: 'left' | 'right';
  leader?: { x: number; y: number; x2: number; y2: number };
}

/** A point label before placement. */
export interface LabelRequest {
  x: number;
  y: number;
  text: string;
  /** Placed before the others. */
  first: boolean;
}

/** Joins the labels of points that coincide ("a, b"). */
export function groupLabels(reqs: readonly LabelRequest[]): LabelRequest[] {
  const byPoint = new Map<string, LabelRequest>();
  for (const r of reqs) {
    const key = `${r.x}:${r.y}`;
    const prev = byPoint.get(key);
    if (prev) byPoint.set(key, { ...prev, text: `${prev.text}, ${r.text}`, first: prev.first || r.first });
    else byPoint.set(key, { ...r });
  }
  return [...byPoint.values()];
}

/**
 * Places point labels so they overlap neither each other nor the points,
 * greedily: each label takes the first free spot of right, left, above-right,
 * below-right, … of its point, in plot pixels (the plot size is fixed, and
 * text widths come from the chart font). A label with no free spot takes the
 * one that overlaps the least area, or is left out when even that would hide
 * a quarter of it (the legend still names its point). Returns positions in
 * data units and the alignment.
 */
export function placeLabels(
  reqs: readonly LabelRequest[],
  xDomain: readonly [number, number],
  yDomain: readonly [number, number],
  /** A polyline labels must not cross (the frontier). */
  line: readonly { x: number; y: number }[] = [],
): PlacedLabel[] {
  const px = (x: number) => ((x - xDomain[0]) / (xDomain[1] - xDomain[0] || 1)) * PLOT_WIDTH;
  const py = (y: number) => PLOT_HEIGHT - ((y - yDomain[0]) / (yDomain[1] - yDomain[0] || 1)) * PLOT_HEIGHT;
  const toX = (p: number) => xDomain[0] + (p / PLOT_WIDTH) * (xDomain[1] - xDomain[0]);
  const toY = (p: number) => yDomain[0] + ((PLOT_HEIGHT - p) / PLOT_HEIGHT) * (yDomain[1] - yDomain[0]);
  type Box = { x0: number; x1: number; y0: number; y1: number };
  const r = 8;
  const taken: Box[] = reqs.map((q) => ({ x0: px(q.x) - r, x1: px(q.x) + r, y0: py(q.y) - r, y1: py(q.y) + r }));
  // The line is an obstacle too: small boxes every few pixels along each segment.
  for (let i = 1; i < line.length; i++) {
    const [a, b] = [line[i - 1]!, line[i]!];
    const len = Math.hypot(px(b.x) - px(a.x), py(b.y) - py(a.y));
    for (let k = 0, steps = Math.ceil(len / 4); k <= steps; k++) {
      const x = px(a.x) + ((px(b.x) - px(a.x)) * k) / steps;
      const y = py(a.y) + ((py(b.y) - py(a.y)) * k) / steps;
      taken.push({ x0: x - 1.5, x1: x + 1.5, y0: y - 1.5, y1: y + 1.5 });
    }
  }
  const h = LABEL_FONT_SIZE + 3;
  const order = reqs.map((q, i) => [q, i] as const).sort(([a, i], [b, j]) => Number(b.first) - Number(a.first) || a.x - b.x || b.y - a.y || i - j);
  const out: PlacedLabel[] = [];
  for (const [q] of order) {
    const w = textWidth(q.text, LABEL_FONT_SIZE);
    const cx = px(q.x);
    const cy = py(q.y);
    // Offsets of the label's anchor from the point: right, left, then stepping up and down.
    const spots: { dx: number; dy: number; align: 'left' | 'right' }[] = [
      { dx: 12, dy: 0, align: 'left' },
      { dx: -12, dy: 0, align: 'right' },
    ];
    for (let k = 1; k <= 5; k++) {
      for (const dy of [-k * h, k * h]) spots.push({ dx: 8, dy, align: 'left' }, { dx: -8, dy, align: 'right' });
    }
    const boxOf = (s: (typeof spots)[number]): Box => {
      const ax = cx + s.dx;
      const x0 = s.align === 'left' ? ax : ax - w;
      return { x0, x1: x0 + w, y0: cy + s.dy - h / 2, y1: cy + s.dy + h / 2 };
    };
    const inside = (b: Box) => b.x0 >= -4 && b.x1 <= PLOT_WIDTH + 4 && b.y0 >= -h && b.y1 <= PLOT_HEIGHT + 2;
    const overlap = (a: Box, b: Box) => Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
    // The first free spot inside the plot; failing that, the one overlapping the least area.
    let spot: (typeof spots)[number] | undefined;
    let least = Infinity;
    for (const s of spots) {
      const b = boxOf(s);
      if (!inside(b)) continue;
      const area = taken.reduce((a, t) => a + overlap(t, b), 0);
      if (area < least) [spot, least] = [s, area];
      if (area === 0) break;
    }
    // A label that would cover a quarter of itself in other marks is left out: the legend still names the point.
    if (!spot || least > 0.25 * w * h) continue;
    taken.push(boxOf(spot));
    const label: PlacedLabel = { x: toX(cx + spot.dx), y: toY(cy + spot.dy), text: q.text, align: spot.align };
    // A label moved off its point's line gets a leader from the point's edge to the label's end.
    if (spot.dy !== 0) label.leader = { x: toX(cx + Math.sign(spot.dx) * 6), y: toY(cy + Math.sign(spot.dy) * 6), x2: toX(cx + spot.dx), y2: toY(cy + spot.dy - Math.sign(spot.dy) * (h / 2 - 2)) };
    out.push(label);
  }
  return out;
}
