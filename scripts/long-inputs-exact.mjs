#!/usr/bin/env node
/**
 * Computes the exact token counts of the long-input cases with js-tiktoken
 * (no bounds, no sampling) and writes test/fixtures/tokens/long-inputs.json.
 * Some cases take minutes each (js-tiktoken is quadratic in piece length);
 * they run on worker threads, and counts already in the file are kept.
 *
 *   node scripts/long-inputs-exact.mjs          # missing counts only
 *   node scripts/long-inputs-exact.mjs --force  # recount everything
 *   node scripts/long-inputs-exact.mjs --jobs 4
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { getEncoding } from 'js-tiktoken';
import { CASES, caseKey, caseText } from '../test/fixtures/tokens/long-inputs.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = resolve(ROOT, 'test/fixtures/tokens/long-inputs.json');

if (!isMainThread) {
  // Worker: count the cases it is sent, one at a time.
  const encoders = new Map();
  parentPort.on('message', (key) => {
    const c = CASES.find((x) => caseKey(x) === key);
    let enc = encoders.get(c.encoding);
    if (!enc) encoders.set(c.encoding, (enc = getEncoding(c.encoding)));
    const text = caseText(c);
    const t0 = performance.now();
    const tokens = enc.encode(text, [], []).length;
    parentPort.postMessage({ key, tokens, seconds: Math.round((performance.now() - t0) / 100) / 10 });
  });
} else {
  const args = process.argv.slice(2);
  const force = args.includes('--force');
  const j = args.indexOf('--jobs');
  const jobs = j >= 0 ? Number(args[j + 1]) : availableParallelism();
  const version = JSON.parse(readFileSync(resolve(ROOT, 'node_modules/js-tiktoken/package.json'), 'utf8')).version;
  const old = existsSync(TARGET) && !force ? JSON.parse(readFileSync(TARGET, 'utf8')) : undefined;
  const counts = old?.tokenizer === `js-tiktoken ${version}` ? old.counts : {};
  const todo = CASES.filter((c) => c.exact !== false && !(caseKey(c) in counts))
    // Longest first (a rough guess of the time), so the workers finish together.
    .sort((a, b) => b.length - a.length)
    .map(caseKey);
  const save = () => {
    const ordered = Object.fromEntries(CASES.map(caseKey).filter((k) => k in counts).map((k) => [k, counts[k]]));
    const file = {
      generatedBy: 'node scripts/long-inputs-exact.mjs; texts from test/fixtures/tokens/long-inputs.mjs',
      tokenizer: `js-tiktoken ${version}`,
      note: 'tokens: exact count of encode(text, [], []); seconds: how long that took on the machine that ran the script',
      counts: ordered,
    };
    writeFileSync(`${TARGET}.tmp`, `${JSON.stringify(file, null, 2)}\n`);
    renameSync(`${TARGET}.tmp`, TARGET);
  };
  console.log(`${todo.length} cases to count on ${Math.min(jobs, todo.length)} threads`);
  let next = 0;
  const start = (w) => {
    if (next >= todo.length) {
      w.terminate();
      return;
    }
    w.postMessage(todo[next++]);
  };
  for (let i = 0; i < Math.min(jobs, todo.length); i++) {
    const w = new Worker(fileURLToPath(import.meta.url));
    w.on('message', ({ key, tokens, seconds }) => {
      counts[key] = { tokens, seconds };
      save();
      console.log(`${key}: ${tokens} tokens in ${seconds} s`);
      start(w);
    });
    w.on('error', (e) => {
      console.error(e);
      process.exitCode = 1;
    });
    start(w);
  }
  if (!todo.length) save();
}
