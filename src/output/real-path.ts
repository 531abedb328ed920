import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';

/**
 * Where a path leads as the system follows it: every symbolic link on the
 * way resolved, for the part that exists. What a writer checks before it
 * writes through a path (files.ts: a staging folder's commit list), and a
 * study's confinement compares (study/confine.ts).
 */

/** How many symbolic links a path may go through, as Linux allows (ELOOP beyond). */
const MAX_LINKS = 40;

/**
 * The real path of `path` (made absolute): each symbolic link on the way
 * followed as the system follows it, its target's `..` taken after the link,
 * and the part that does not exist appended as written. A link that points
 * nowhere is followed too: writing through it would create its target.
 */
export function realPath(path: string): string {
  const abs = resolve(path);
  return walk(parse(abs).root, abs, { links: 0 });
}

/** Follows `path`'s components from the real folder `from`. */
function walk(from: string, path: string, seen: { links: number }): string {
  let at = from;
  for (const part of path.split(/[\\/]+/)) {
    if (part === '' || part === '.' || part === parse(path).root.replace(/[\\/]+$/, '')) continue;
    if (part === '..') {
      at = dirname(at);
      continue;
    }
    const next = join(at, part);
    const target = linkTarget(next);
    if (target === undefined || seen.links >= MAX_LINKS) {
      at = next;
      continue;
    }
    seen.links++;
    at = walk(isAbsolute(target) ? parse(resolve(target)).root : at, target, seen);
  }
  return at;
}

/** The target a symbolic link holds, or undefined when `path` is not a link (or does not exist). */
function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the real path `path` is `root` or below it. */
export function isWithin(path: string, root: string): boolean {
  const r = relative(root, path);
  return r === '' || (r !== '..' && !r.startsWith(`..${sep}`) && !isAbsolute(r));
}

/**
 * The first symbolic link on the way to `path` (its last component
 * included) that lies in `root` or below it, as the system would meet it,
 * with where it leads; undefined when there is none. Links above `root`
 * (a home folder that is itself a link) are followed and not reported.
 */
export function linkOnTheWay(path: string, root: string): { link: string; leadsTo: string } | undefined {
  const realRoot = realPath(root);
  const abs = resolve(path);
  let at = parse(abs).root;
  for (const part of abs.slice(at.length).split(/[\\/]+/)) {
    if (part === '') continue;
    const next = join(at, part);
    if (linkTarget(next) === undefined) {
      at = next;
      continue;
    }
    const leadsTo = realPath(next);
    if (isWithin(at, realRoot)) return { link: next, leadsTo };
    at = leadsTo;
  }
  return undefined;
}
