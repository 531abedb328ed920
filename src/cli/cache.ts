import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { clearReplayCache, DEFAULT_REPLAY_CACHE_BYTES, REPLAY_DIR, replayCacheStats } from '../engine/replay-cache.js';
import { displayPath } from '../study/study.js';
import type { Command } from './_command.js';
import type { IO } from './_io.js';
import { CACHE_DIR_ENV, DEFAULT_TOKEN_CACHE, tokenCacheFromFlags, type StudyFlags } from './_study.js';

const ACTIONS = ['info', 'clear'] as const;

/** The action, or a usage error naming it (also for a library caller: an unknown action clears nothing). */
function actionOf(action: string): (typeof ACTIONS)[number] {
  const known = ACTIONS.find((a) => a === action);
  if (!known) throw new UsageError(`cache: ${JSON.stringify(action)} is not one of ${ACTIONS.map((a) => JSON.stringify(a)).join(', ')}`);
  return known;
}

interface CacheFlags {
  action: string;
  tokenCache?: StudyFlags['tokenCache'];
}

export function cacheCommand(io: IO): Command<CacheFlags> {
  return {
    command: 'cache <action>',
    describe: 'show (info) or empty (clear) the cache folder: token counts, replayed units and rendered charts',
    examples: [
      ['ctxsim cache info', 'entries and bytes of .ctxsim-cache/'],
      ['ctxsim cache clear --token-cache /tmp/c', 'empty the cache folder /tmp/c'],
    ],
    builder: (y: Argv) =>
      y
        .positional('action', {
          type: 'string',
          choices: ACTIONS,
          // Checked here, before yargs checks the choices: its message would name the positional as a flag (--action).
          coerce: actionOf,
          describe: 'info: what the cache holds; clear: remove it all',
        })
        .option('token-cache', { type: 'string', describe: 'the cache folder', defaultDescription: `$${CACHE_DIR_ENV}, else ${DEFAULT_TOKEN_CACHE}` }),
    handler: (argv: CacheFlags) => cache(argv, io),
  };
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
