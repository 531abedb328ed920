import { textWidth } from './font.js';
import { PLOT_HEIGHT, PLOT_WIDTH } from './plot.js';

/**
 * Points and their labels in the retention-vs-cost chart, laid out in plot
 * pixels: points that would cover each other drawn apart, and labels placed
 * so they overlap neither each other, the points nor the frontier.
 */

/** Font size of point labels, in pixels. */
export const LABEL_FONT_SIZE = 11;

/** A label placed: anchor in data units, alignment, and a leader line when it sits off its point's line. */
export interface PlacedLabel {
  x: number;
  y: number;
  text: string;
  align: 'left' | 'right';
  bold?: boolean;
  id?: number;
  leader?: { x: number; y: number; x2: number; y2: number };
}

/** A plot's size in pixels: the charts' default, or a panel's. */
export interface PlotSize {
  width: number;
  height: number;
}

const PLOT: PlotSize = { width: PLOT_WIDTH, height: PLOT_HEIGHT };

/** Data units ↔ plot pixels for a plot of `size` showing `xDomain` × `yDomain` (pixel y grows downwards). */
export function pixels(xDomain: readonly [number, number], yDomain: readonly [number, number], size: PlotSize) {
  const { width, height } = size;
  return {
    px: (x: number) => ((x - xDomain[0]) / (xDomain[1] - xDomain[0] || 1)) * width,
    py: (y: number) => height - ((y - yDomain[0]) / (yDomain[1] - yDomain[0] || 1)) * height,
    toX: (p: number) => xDomain[0] + (p / width) * (xDomain[1] - xDomain[0]),
    toY: (p: number) => yDomain[0] + ((height - p) / height) * (yDomain[1] - yDomain[0]),
  };
}

/** The radius, in pixels, of a point of the retention-vs-cost chart (its marks are 130–150 px² with their stroke). */
export const POINT_RADIUS = 7;

/**
 * Where to draw points that would cover each other: points whose marks
 * overlap (closer than two radii, in plot pixels) are gathered, and each
 * group is drawn around its centre, its members `2 × radius` apart — two side
 * by side, more on a ring — in the given order, starting at the left. A
 * point that overlaps no other is drawn where it is. Returns data units.
 */
export function spreadPoints(
  points: readonly { x: number; y: number }[],
  xDomain: readonly [number, number],
  yDomain: readonly [number, number],
  size: PlotSize = PLOT,
  radius = POINT_RADIUS,
): { x: number; y: number; moved: boolean }[] {
  const { px, py, toX, toY } = pixels(xDomain, yDomain, size);
  const at = points.map((p) => ({ x: px(p.x), y: py(p.y) }));
  // Groups of overlapping points (a point joins the group of any it overlaps).
  const group = at.map((_, i) => i);
  const root = (i: number): number => (group[i] === i ? i : (group[i] = root(group[i]!)));
  for (let i = 0; i < at.length; i++) {
    for (let j = i + 1; j < at.length; j++) {
      if (Math.hypot(at[i]!.x - at[j]!.x, at[i]!.y - at[j]!.y) < 2 * radius - 1e-9) group[root(j)] = root(i);
    }
  }
  const members = new Map<number, number[]>();
  at.forEach((_, i) => members.set(root(i), [...(members.get(root(i)) ?? []), i]));
  const out = points.map((p) => ({ x: p.x, y: p.y, moved: false }));
  for (const ids of members.values()) {
    if (ids.length < 2) continue;
    const cx = ids.reduce((a, i) => a + at[i]!.x, 0) / ids.length;
    const cy = ids.reduce((a, i) => a + at[i]!.y, 0) / ids.length;
    // On a ring whose neighbouring members are two radii apart: side by side for two.
    const ring = radius / Math.sin(Math.PI / ids.length);
    ids.forEach((i, k) => {
      const angle = Math.PI + (2 * Math.PI * k) / ids.length;
      out[i] = { x: toX(cx + ring * Math.cos(angle)), y: toY(cy - ring * Math.sin(angle)), moved: true };
    });
  }
  return out;
}

/** A point label before placement. */
export interface LabelRequest {
  x: number;
  y: number;
  text: string;
  /** Placed before the others. */
  first: boolean;
  /** Set in bold (measured so), and placed before every other label, even over other marks: the verdict's pick. */
  bold?: boolean;
  /** How far around the point its mark reaches, in pixels (default 8): kept clear, and the label set off by it. */
  radius?: number;
  /** The caller's name for the point, given back with its label. */
  id?: number;
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
  size: PlotSize = PLOT,
): PlacedLabel[] {
  const { width, height } = size;
  const { px, py, toX, toY } = pixels(xDomain, yDomain, size);
  type Box = { x0: number; x1: number; y0: number; y1: number };
  const radius = (q: LabelRequest) => q.radius ?? 8;
  const taken: Box[] = reqs.map((q) => ({ x0: px(q.x) - radius(q), x1: px(q.x) + radius(q), y0: py(q.y) - radius(q), y1: py(q.y) + radius(q) }));
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
  const order = reqs
    .map((q, i) => [q, i] as const)
    .sort(([a, i], [b, j]) => Number(!!b.bold) - Number(!!a.bold) || Number(b.first) - Number(a.first) || a.x - b.x || b.y - a.y || i - j);
  const out: PlacedLabel[] = [];
  for (const [q] of order) {
    const w = textWidth(q.text, LABEL_FONT_SIZE, q.bold);
    const cx = px(q.x);
    const cy = py(q.y);
    // Offsets of the label's anchor from the point: right, left, then stepping up and down.
    const r = radius(q);
    const spots: { dx: number; dy: number; align: 'left' | 'right' }[] = [
      { dx: r + 4, dy: 0, align: 'left' },
      { dx: -r - 4, dy: 0, align: 'right' },
    ];
    for (let k = 1; k <= 5; k++) {
      for (const dy of [-k * h, k * h]) spots.push({ dx: r, dy, align: 'left' }, { dx: -r, dy, align: 'right' });
    }
    const boxOf = (s: (typeof spots)[number]): Box => {
      const ax = cx + s.dx;
      const x0 = s.align === 'left' ? ax : ax - w;
      return { x0, x1: x0 + w, y0: cy + s.dy - h / 2, y1: cy + s.dy + h / 2 };
    };
    const inside = (b: Box) => b.x0 >= -4 && b.x1 <= width && b.y0 >= -h && b.y1 <= height + 2;
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
    if (!spot || (least > 0.25 * w * h && !q.bold)) continue;
    taken.push(boxOf(spot));
    const label: PlacedLabel = { x: toX(cx + spot.dx), y: toY(cy + spot.dy), text: q.text, align: spot.align, ...(q.bold && { bold: true }), ...(q.id !== undefined && { id: q.id }) };
    // A label moved off its point's line gets a leader from the point's edge to the label's end.
    if (spot.dy !== 0) label.leader = { x: toX(cx + Math.sign(spot.dx) * (r - 2)), y: toY(cy + Math.sign(spot.dy) * (r - 2)), x2: toX(cx + spot.dx), y2: toY(cy + spot.dy - Math.sign(spot.dy) * (h / 2 - 2)) };
    out.push(label);
  }
  return out;
}
