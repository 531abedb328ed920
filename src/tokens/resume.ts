/**
 * Lists kept from one prompt to the next: successive prompts of a session
 * mostly start with the last one's messages (the same objects, as a growing
 * transcript sends them), so what was made for those is kept and only the
 * rest is made again.
 */

/** How many leading items two lists share as the same objects. */
export function sharedPrefix<T>(a: readonly T[], b: readonly T[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Whether `a` starts with every item of `b`, the same objects, and is another list (one changed in place is read again). */
export function extendsList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a !== b && a.length >= b.length && sharedPrefix(a, b) === b.length;
}

/** Cuts a list to its first n items (setting the length of a list costs even when it does not change it). */
export function truncate(list: unknown[], n: number): void {
  if (list.length > n) list.length = n;
}
