import { UsageError } from '../errors.js';
import { NAMESPACE_NAMES, NAMESPACES } from '../store/namespaces.js';
import { clearStore, DEFAULT_STORE_BYTES, storeStats, type StoreStats } from '../store/store.js';
import { displayPath } from '../output/display.js';
import type { IO } from './_io.js';
import { cacheFolderOf } from './_cache-folder.js';
import { commandSettings } from './_setting-flags.js';
import { plural } from '../records/format.js';

/** What `ctxsim cache` does. */
export const ACTIONS = ['info', 'clear'] as const;

/** The action, or a usage error naming it (also for a library caller: an unknown action clears nothing). */
export function actionOf(action: string): (typeof ACTIONS)[number] {
  const known = ACTIONS.find((a) => a === action);
  if (!known) throw new UsageError(`cache: ${JSON.stringify(action)} is not one of ${ACTIONS.map((a) => JSON.stringify(a)).join(', ')}`);
  return known;
}

/** `--token-cache` as given: `commandSettings` reads it. */
export interface CacheFlags {
  action: string;
  tokenCache?: unknown;
}

/** Bytes for people: B, kB, MB or GB (powers of 1000), one decimal past kB. */
function size(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const [unit, div] = bytes < 1e6 ? ['kB', 1e3] : bytes < 1e9 ? ['MB', 1e6] : ['GB', 1e9];
  return `${(bytes / (div as number)).toFixed(1)} ${unit as string}`;
}


const entries = (n: number) => plural(n, 'entry', 'entries');

/** One line per namespace (its folder, what it holds, entries and bytes), then the files an older ctxsim left, if any. */
function namespaceLines(stats: StoreStats): string[] {
  const { legacy } = stats;
  return [
    ...NAMESPACE_NAMES.map((n) => `${n}/ (${NAMESPACES[n].holds}): ${entries(stats.namespaces[n].entries)}, ${size(stats.namespaces[n].bytes)}`),
    ...(legacy.entries ? [`left by an older ctxsim: ${plural(legacy.entries, 'file')}, ${size(legacy.bytes)}`] : []),
  ];
}

/** The one line saying which symbolic links inside the cache folder were skipped (`skipped`) or left (`left`), as a run warns of one; none when there are none. */
function linksLine(links: readonly string[], did: 'skipped' | 'left'): string | undefined {
  if (!links.length) return undefined;
  return `ctxsim: warning: ${did} ${plural(links.length, 'symbolic link')} inside the cache folder, which the cache never follows: ${links.map(displayPath).join(', ')}\n`;
}

/** `ctxsim cache info|clear`: what the cache folder holds, namespace by namespace, or empty it (only ctxsim's own files go). */
export function cache(flags: CacheFlags, io: IO): number {
  const action = actionOf(flags.action);
  const { dir, warning } = cacheFolderOf(commandSettings(flags).tokenCache);
  if (warning) throw new UsageError(`cache: ${warning.replace(/; running without a cache/, '')}`);
  if (dir === false) throw new UsageError('cache: --no-token-cache names no folder');
  if (action === 'info') {
    const stats = storeStats(dir);
    const { total } = stats;
    io.out([`cache folder: ${displayPath(dir)}`, ...namespaceLines(stats), `in all: ${entries(total.entries)}, ${size(total.bytes)} (bound ${size(DEFAULT_STORE_BYTES)}, least recently used removed past it)`, ''].join('\n'));
    const skipped = linksLine(stats.links, 'skipped');
    if (skipped) io.err(skipped);
    return 0;
  }
  const removed = clearStore(dir);
  io.out([`cleared ${displayPath(dir)}: ${entries(removed.total.entries)}, ${size(removed.total.bytes)}`, ...namespaceLines(removed).map((l) => `  ${l}`), ''].join('\n'));
  const left = linksLine(removed.links, 'left');
  if (left) io.err(left);
  return 0;
}
