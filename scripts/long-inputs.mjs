#!/usr/bin/env node
/**
 * Times the bounded token counter on long inputs and compares its counts with
 * the exact ones in test/fixtures/tokens/long-inputs.json (computed offline by
 * scripts/long-inputs-exact.mjs), then times the token cache with a million
 * entries. Prints markdown tables (the ones in docs/tokens.md).
 *
 *   npm run build && node scripts/long-inputs.mjs
 *   node scripts/long-inputs.mjs --only "DNA"     # cases whose name contains DNA
 *
 * The requirement it checks: any single message up to 1 MB is counted in
 * under 2 s, and estimates stay within 2% of the exact count; and that
 * concurrent saves into one cache folder keep every entry.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CASES, caseKey, caseText } from '../test/fixtures/tokens/long-inputs.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(join(ROOT, 'dist', p));
const { textMeasure, counterId } = await dist('tokens/encoding.js');
const { TokenCache, cacheKey } = await dist('tokens/token-cache.js');

const args = process.argv.slice(2);
const o = args.indexOf('--only');
const only = o >= 0 ? args[o + 1] : undefined;
const exact = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/tokens/long-inputs.json'), 'utf8')).counts;

const fmt = (n) => n.toLocaleString('en-US');
const row = (cells) => `| ${cells.join(' | ')} |`;

console.log(row(['input', 'encoding', 'exact tokens', 'counted', 'error', 'estimated', 'time', 'exact count took']));
console.log(row(['---', '---', '---:', '---:', '---:', '---', '---:', '---:']));
let slowest = 0;
let worst = 0;
for (const c of CASES) {
  if (only && !c.name.includes(only)) continue;
  const measure = textMeasure(c.encoding);
  measure('warm up'); // loads the ranks, outside the timing
  const text = caseText(c);
  const t0 = performance.now();
  const r = measure(text);
  const ms = performance.now() - t0;
  slowest = Math.max(slowest, ms);
  const e = exact[caseKey(c)];
  const err = e ? (r.tokens - e.tokens) / e.tokens : undefined;
  if (err !== undefined) worst = Math.max(worst, Math.abs(err));
  console.log(
    row([
      c.name,
      c.encoding,
      e ? fmt(e.tokens) : 'out of reach',
      fmt(r.tokens),
      err === undefined ? '—' : `${err >= 0 ? '+' : ''}${(err * 100).toFixed(2)}%`,
      r.estimated ? 'yes' : 'no',
      `${fmt(Math.round(ms))} ms`,
      e ? `${fmt(e.seconds)} s` : '—',
    ]),
  );
}
console.log(`\nslowest: ${fmt(Math.round(slowest))} ms (limit 2,000 ms); largest error: ${(worst * 100).toFixed(2)}% (limit 2%)`);

if (!only) {
  // The token cache: a million entries written, loaded and looked up.
  const dir = mkdtempSync(join(tmpdir(), 'ctxsim-cache-bench-'));
  const id = counterId('o200k_base');
  const n = 1_000_000;
  const w = TokenCache.open(dir, id);
  const keys = [];
  for (let i = 0; i < n; i++) {
    const k = cacheKey(`text ${i}`);
    if (i % 10 === 0) keys.push(k);
    w.put(k, { tokens: i % 5000, estimated: i % 1000 === 0 });
  }
  let t0 = performance.now();
  w.save();
  const saveMs = performance.now() - t0;
  const bytes = statSync(w.file).size;
  t0 = performance.now();
  const r = TokenCache.open(dir, id);
  const loadMs = performance.now() - t0;
  t0 = performance.now();
  let hits = 0;
  for (const k of keys) if (r.get(k)) hits++;
  const lookupUs = ((performance.now() - t0) * 1000) / keys.length;
  t0 = performance.now();
  for (let i = 0; i < keys.length; i++) cacheKey(`text ${i}`);
  const hashUs = ((performance.now() - t0) * 1000) / keys.length;
  rmSync(dir, { recursive: true, force: true });
  console.log(`\n| token cache, ${fmt(n)} entries | |`);
  console.log('| --- | ---: |');
  console.log(`| file size | ${(bytes / 1e6).toFixed(1)} MB |`);
  console.log(`| save (sort, write, rename) | ${fmt(Math.round(saveMs))} ms |`);
  console.log(`| load (read, checksum) | ${fmt(Math.round(loadMs))} ms |`);
  console.log(`| lookup | ${lookupUs.toFixed(2)} µs (${fmt(hits)}/${fmt(keys.length)} found) |`);
  console.log(`| key (SHA-256 of a short text) | ${hashUs.toFixed(2)} µs |`);
}

if (!only) {
  // Concurrent saves: threads open one folder, each adds its own entries, all save at once.
  const dir = mkdtempSync(join(tmpdir(), 'ctxsim-cache-race-'));
  const threads = 8;
  const each = 10_000;
  const cacheUrl = pathToFileURL(join(ROOT, 'dist', 'tokens', 'token-cache.js')).href;
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(${JSON.stringify(cacheUrl)}).then(({ TokenCache, cacheKey }) => {
      const { dir, id, t, each } = workerData;
      const c = TokenCache.open(dir, id);
      for (let i = 0; i < each; i++) c.put(cacheKey(\`thread \${t} text \${i}\`), { tokens: i, estimated: false });
      // Start saving together.
      Atomics.wait(new Int32Array(workerData.gate), 0, 0);
      parentPort.postMessage(c.save());
    });`;
  const gate = new SharedArrayBuffer(4);
  const id = counterId('o200k_base');
  const t0 = performance.now();
  const warnings = await Promise.all(
    Array.from({ length: threads }, (_, t) => {
      const w = new Worker(code, { eval: true, workerData: { dir, id, t, each, gate } });
      return new Promise((ok, fail) => {
        w.once('message', ok);
        w.once('error', fail);
      });
    }).concat([new Promise((ok) => setTimeout(() => ok(Atomics.notify(new Int32Array(gate), 0)), 2000)).then(() => [])]),
  );
  const ms = performance.now() - t0 - 2000;
  const c = TokenCache.open(dir, id);
  let found = 0;
  for (let t = 0; t < threads; t++) for (let i = 0; i < each; i++) if (c.get(cacheKey(`thread ${t} text ${i}`))?.tokens === i) found++;
  const { readdirSync } = await import('node:fs');
  const left = readdirSync(dirname(c.file)).filter((f) => f !== basename(c.file));
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `\nconcurrent saves: ${threads} threads × ${fmt(each)} entries → ${fmt(found)} of ${fmt(threads * each)} found, ` +
      `${c.warnings.length ? c.warnings.join('; ') : 'file valid'}, ${left.length ? `left behind: ${left.join(', ')}` : 'no temp or lock files left'}, ` +
      `warnings: ${warnings.flat().length}, about ${fmt(Math.max(0, Math.round(ms)))} ms`,
  );
}
