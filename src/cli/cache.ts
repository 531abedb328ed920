import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { clearReplayCache, DEFAULT_REPLAY_CACHE_BYTES, REPLAY_DIR, replayCacheStats } from '../engine/replay-cache.js';
import { displayPath } from '../study/package.js';
import type { IO } from './_io.js';
import { tokenCacheFromFlags, type TokenCacheFlag } from './_cache-folder.js';

/** What `ctxsim cache` does. */
export const ACTIONS = ['info', 'clear'] as const;

/** The action, or a usage error naming it (also for a library caller: an unknown action clears nothing). */
export function actionOf(action: string): (typeof ACTIONS)[number] {
  const known = ACTIONS.find((a) => a === action);
  if (!known) throw new UsageError(`cache: ${JSON.stringify(action)} is not one of ${ACTIONS.map((a) => JSON.stringify(a)).join(', ')}`);
  return known;
}

export interface CacheFlags {
  action: string;
  tokenCache?: TokenCacheFlag;
}

/** The token-count files of the cache folder (`<encoding>.tokens`), with their sizes. */
function tokenFiles(dir: string): { path: string; bytes: number }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    if (!name.endsWith('.tokens')) return [];
    const path = join(dir, name);
    try {
      const st = statSync(path);
      return st.isFile() ? [{ path, bytes: st.size }] : [];
    } catch {
      return [];
    }
  });
}

/** Bytes for people: B, kB, MB or GB (powers of 1000), one decimal past kB. */
function size(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const [unit, div] = bytes < 1e6 ? ['kB', 1e3] : bytes < 1e9 ? ['MB', 1e6] : ['GB', 1e9];
  return `${(bytes / (div as number)).toFixed(1)} ${unit as string}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** `ctxsim cache info|clear`: what the cache folder holds, or empty it (only ctxsim's own files go). */
export function cache(flags: CacheFlags, io: IO): number {
  const action = actionOf(flags.action);
  const dir = tokenCacheFromFlags(flags.tokenCache);
  if (dir === false) throw new UsageError('cache: --no-token-cache names no folder');
  const replayDir = join(dir, REPLAY_DIR);
  const tokens = tokenFiles(dir);
  const tokenBytes = tokens.reduce((n, f) => n + f.bytes, 0);
  if (action === 'info') {
    const r = replayCacheStats(replayDir);
    io.out(
      [
        `cache folder: ${displayPath(dir)}`,
        `replays (units and rendered charts): ${plural(r.entries, 'entry', 'entries')}, ${size(r.bytes)} (bound ${size(DEFAULT_REPLAY_CACHE_BYTES)}, least recently used removed past it)`,
        `token counts: ${plural(tokens.length, 'file')}, ${size(tokenBytes)}`,
        '',
      ].join('\n'),
    );
    return 0;
  }
  const r = clearReplayCache(replayDir);
  for (const f of tokens) rmSync(f.path, { force: true });
  io.out(`cleared ${displayPath(dir)}: ${plural(r.entries, 'replay entry', 'replay entries')} (${size(r.bytes)}), ${plural(tokens.length, 'token-count file')} (${size(tokenBytes)})\n`);
  return 0;
}
