// Measures spansOf (src/upkeep/salience.ts) on about 1 MB of real text: the
// shared dialogue samples (ABCD, MultiWOZ, SGD), the shipped scenarios, the
// agent transcripts (tool output, code) and, to reach 1 MB, the LiteLLM price
// table (JSON). Cut into message-sized pieces at line ends, each piece made a
// fresh string so the cache never hits. Single thread, after a warm-up.
//
//   npm run build && node scripts/bench-salience.mjs [path/to/salience.js]
//
// Needs ../shared/data beside the repository (or $CTXSIM_SHARED_DATA).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATA = process.env.CTXSIM_SHARED_DATA ?? resolve(ROOT, '..', 'shared', 'data');
const modulePath = resolve(process.argv[2] ?? resolve(ROOT, 'dist', 'upkeep', 'salience.js'));
if (!existsSync(DATA)) {
  console.error(`no shared data at ${DATA}`);
  process.exit(1);
}

const json = (rel) => JSON.parse(readFileSync(resolve(DATA, rel), 'utf8'));
const strings = (v, out) => {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
};
const parts = [];
for (const c of json('abcd_sample/abcd_sample.json')) for (const [, t] of c.original) parts.push(t);
for (const d of json('multiwoz21_convlab_sample/dummy_data.json')) for (const t of d.turns) parts.push(t.utterance);
for (const d of json('sgd_sample/dialogues_001_first10.json')) for (const t of d.turns) parts.push(t.utterance);
for (const f of readdirSync(resolve(ROOT, 'scenarios'))) parts.push(readFileSync(resolve(ROOT, 'scenarios', f), 'utf8'));
const agent = resolve(DATA, 'agent_transcripts_sample');
const jsonl = readFileSync(resolve(agent, 'claude-code_sonnet-4-5_subagent-a2898e3.jsonl'), 'utf8');
parts.push(...new Set(strings(jsonl.split('\n').filter(Boolean).map((l) => JSON.parse(l).message), [])));
parts.push(...new Set(strings(json('agent_transcripts_sample/mini-swe-agent_deepseek-chat_django-15213.traj.json').messages.map((m) => m.content), [])));
parts.push(...new Set(strings(json('agent_transcripts_sample/swe-agent_fc-demo_marshmallow-1867.traj').trajectory.map((s) => [s.observation, s.response]), [])));
let text = parts.join('\n');
text = (text + '\n' + readFileSync(resolve(DATA, 'litellm_prices/model_prices_and_context_window.json'), 'utf8')).slice(0, 1_000_000);

// Message-sized pieces (at most 8 KB, cut at line ends).
const pieces = [];
for (let i = 0; i < text.length; ) {
  let j = Math.min(text.length, i + 8192);
  const nl = text.lastIndexOf('\n', j);
  if (j < text.length && nl > i) j = nl + 1;
  pieces.push(text.slice(i, j));
  i = j;
}
const fresh = (s) => (' ' + s).slice(1); // a new string object with the same text: no cache hit by identity

let t0 = performance.now();
const { spansOf } = await import(pathToFileURL(modulePath).href);
const importMs = performance.now() - t0;
t0 = performance.now();
spansOf('Hi, I am Kavya. My order SE-10423 has not arrived.');
const firstMs = performance.now() - t0;

const runs = [];
let spans = 0;
for (let r = 0; r < 4; r++) {
  // Every run sees texts it has not seen: a different prefix per run defeats the cache.
  const batch = pieces.map((p) => fresh(`${r} ${p}`));
  t0 = performance.now();
  spans = 0;
  for (const p of batch) spans += spansOf(p).length;
  runs.push(performance.now() - t0);
}
const best = Math.min(...runs.slice(1)); // the first run is the warm-up
const kb = text.length / 1024;
console.log(
  JSON.stringify({
    chars: text.length,
    pieces: pieces.length,
    spans,
    importMs: Math.round(importMs),
    firstCallMs: Math.round(firstMs),
    runsMs: runs.map(Math.round),
    usPerKB: Math.round((best * 1000) / kb),
    charsPerSec: Math.round((text.length / best) * 1000),
    rssMB: Math.round(process.memoryUsage().rss / 1e6),
  }),
);

// One 200 kB single-line JSON blob and 1 MB in one call: linear time, chunked.
for (const size of [200_000, 1_000_000]) {
  const blob = fresh(text.slice(0, size).replace(/\n/g, ' '));
  t0 = performance.now();
  const n = spansOf(blob).length;
  console.log(JSON.stringify({ oneCallChars: size, singleLine: true, spans: n, ms: Math.round(performance.now() - t0) }));
}
