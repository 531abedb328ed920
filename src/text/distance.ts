/**
 * The edit distance from `a` to `b` (Levenshtein); with `within`, to the
 * nearest substring of `b` (Sellers: a match may start and end anywhere in `b`).
 */
export function editDistance(a: string, b: string, within = false): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => (within ? 0 : j));
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return within ? Math.min(...prev) : prev[b.length]!;
}
