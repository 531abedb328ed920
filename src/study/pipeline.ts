import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { autoJobs, streamStudyParallel } from '../engine/parallel.js';
import { collectRecords, type Conversations, type RecordSink, type RunInfo, type RunOptions, type RunResults } from '../engine/run.js';
import { UsageError } from '../errors.js';
import { scenarioHashes, sha256, type StudyFingerprint } from '../gate/baseline.js';
import { defaultStudy, displayPath, loadScenarios, loadStudy, policiesFromFlags, type Study } from './study.js';
import { lookup } from '../pricing/prices.js';
import { reportInfo, scenarioShape, type ReportInfo } from '../records/info.js';
import type { Conversation } from '../types.js';
import type { IO } from './files.js';

/** Flags every study-running command takes; they override the study file. */
export interface StudyFlags {
  study?: string;
  out?: string;
  seed?: number;
  policy?: string[];
  scenario?: string[];
  model?: string;
  tokenizer?: string;
  prices?: string;
  cache?: string;
  /** A folder, or false from `--no-token-cache`; both flags given: a list, the last wins. */
  tokenCache?: string | false | (string | false)[];
  /** Worker threads; omitted: `autoJobs` (every core for a large study, one for a small one). */
  jobs?: number;
}

/** Where the token-count cache lives unless `--token-cache` says otherwise (relative to the working directory). */
export const DEFAULT_TOKEN_CACHE = '.ctxsim-cache';

export const STUDY_OPTIONS = {
  out: { type: 'string', describe: 'output folder (overrides the study)' },
  seed: { type: 'number', describe: 'random seed' },
  policy: { type: 'string', array: true, describe: 'policy spec, e.g. window-tokens:budget=2000 (repeatable; replaces the study list)' },
  scenario: { type: 'string', array: true, describe: 'scenario file glob (repeatable; replaces the study list)' },
  model: { type: 'string', describe: 'chat model, e.g. gpt-4o-mini' },
  tokenizer: { type: 'string', describe: 'auto | o200k_base | cl100k_base | chars4' },
  prices: { type: 'string', describe: 'LiteLLM-format price table JSON' },
  cache: { type: 'string', choices: ['auto', 'off'], describe: 'prompt caching' },
  'token-cache': {
    type: 'string',
    describe: 'folder of the persistent token-count cache (--no-token-cache: none)',
    defaultDescription: DEFAULT_TOKEN_CACHE,
  },
  jobs: {
    type: 'number',
    describe: 'worker threads (output is the same for any number)',
    defaultDescription: 'cores; 1 below 1 MB of message text',
  },
} as const;

/** A study with where its token counts are cached. */
export type RunnableStudy = Study & Pick<RunOptions, 'tokenCache' | 'jobs'>;

/** The token-cache folder the flags name: the default, a folder, or false for none. */
export function tokenCacheFromFlags(flag: StudyFlags['tokenCache']): string | false {
  const last = Array.isArray(flag) ? flag[flag.length - 1] : flag;
  if (last === undefined) return DEFAULT_TOKEN_CACHE;
  if (last === '') throw new UsageError('--token-cache: name a folder (or use --no-token-cache)');
  return last;
}

/** The study file (or the default study) with the command-line flags applied. */
export function studyFromFlags(flags: StudyFlags): RunnableStudy {
  const study = flags.study ? loadStudy(flags.study) : defaultStudy();
  if (flags.out !== undefined) study.out = resolve(flags.out);
  if (flags.seed !== undefined) {
    if (!Number.isInteger(flags.seed)) throw new UsageError(`--seed: expected a whole number, got ${flags.seed}`);
    study.seed = flags.seed;
  }
  if (flags.model !== undefined) study.model = flags.model;
  if (flags.tokenizer !== undefined) study.tokenizer = flags.tokenizer;
  if (flags.prices !== undefined) study.prices = resolve(flags.prices);
  if (flags.cache !== undefined) study.cache = flags.cache as Study['cache'];
  if (flags.policy?.length) study.policies = policiesFromFlags(flags.policy);
  if (flags.scenario?.length) study.scenarios = flags.scenario.map((pattern) => ({ kind: 'glob', pattern, base: process.cwd() }));
  if (flags.jobs !== undefined && !(Number.isInteger(flags.jobs) && flags.jobs >= 1)) {
    throw new UsageError(`--jobs: expected a whole number ≥ 1, got ${flags.jobs}`);
  }
  return Object.assign(study, { tokenCache: tokenCacheFromFlags(flags.tokenCache) }, flags.jobs !== undefined && { jobs: flags.jobs });
}

/** A study as run, its records streamed: what the run told, and fingerprint. */
export interface Streamed {
  study: Study;
  run: RunInfo;
  fingerprint: StudyFingerprint;
  /** What reports say about the run besides its records. */
  info: ReportInfo;
}

/** A study as run: its results and fingerprint. */
export interface Executed extends Omit<Streamed, 'run'> {
  results: RunResults;
}

/** How a study runs: quietly or not, one shard of it or all, and whether worker threads make the record files' text (see `RunOptions.recordText`). */
export interface ExecuteOptions {
  quiet?: boolean;
  shard?: RunOptions['shard'];
  recordText?: boolean;
}

/**
 * Loads the study's scenarios and runs it on `study.jobs` worker threads
 * (default `autoJobs`), each scenario's records handed to `sink` in study
 * order, with progress on stderr unless quiet and token-cache warnings always.
 */
export async function streamStudy(study: RunnableStudy, io: IO, opts: ExecuteOptions, sink: RecordSink): Promise<Streamed> {
  const loaded = loadScenarios(study.scenarios, { seed: study.seed, ...(!opts.quiet && { onNote: (line: string) => io.err(`${line}\n`) }) });
  const jobs = study.jobs ?? autoJobs(loaded);
  // What the fingerprint and the reports need of the conversations, taken before the run lets them go.
  const scenarios = scenarioHashes(loaded);
  const shapes = loaded.map(scenarioShape);
  const run = await streamStudyParallel(
    {
      ...study,
      conversations: handOver(loaded),
      jobs,
      ...(opts.shard && { shard: opts.shard }),
      ...(opts.recordText && { recordText: true }),
      ...(!opts.quiet && { onProgress: progressLine(io) }),
    },
    sink,
  );
  for (const w of run.warnings) io.err(`ctxsim: warning: ${w}\n`);
  const fp: StudyFingerprint = {
    model: study.model,
    tokenizer: run.encoding.name,
    prices: study.prices === 'builtin' ? `builtin ${run.prices.date}` : `${displayPath(study.prices)} sha256:${sha256(readFileSync(study.prices, 'utf8')).slice(0, 12)}`,
    cache: `${study.cache} ttl=${study.cacheTtl}s`,
    rules: run.rules,
    seed: study.seed,
    policies: study.policies.map((p) => p.name),
    scenarios,
  };
  const info = reportInfo({
    studyFile: study.file ? displayPath(study.file) : null,
    seed: study.seed,
    model: study.model,
    tokenizer: study.tokenizer,
    encoding: run.encoding,
    prices: study.prices === 'builtin' ? 'builtin' : displayPath(study.prices),
    priceDate: run.prices.date,
    cache: study.cache,
    maxInputTokens: lookup(run.prices, study.model).maxInputTokens,
    conversations: shapes,
    policies: study.policies,
  });
  return { study, run, fingerprint: fp, info };
}

/**
 * The loaded conversations as the run takes them: each handed out once, in
 * order, and let go here (the run keeps none either), so a large study's
 * memory falls as it runs instead of holding every conversation to the end.
 */
export function handOver(list: (Conversation | undefined)[]): Conversations {
  return {
    length: list.length,
    at(i) {
      const c = list[i];
      list[i] = undefined;
      return c;
    },
  };
}

/** `streamStudy` keeping every record. */
export async function executeStudy(study: RunnableStudy, io: IO, opts: ExecuteOptions = {}): Promise<Executed> {
  const collected = collectRecords();
  const { run, ...rest } = await streamStudy(study, io, opts, collected.sink);
  return { ...rest, results: collected.results(run) };
}

/** Progress on stderr: one redrawn line on a terminal, one plain line per finished scenario otherwise. */
export function progressLine(io: IO) {
  return (done: number, total: number, scenario: string) => {
    const line = `[${done}/${total}] ${scenario}`;
    if (io.isTTY) io.err(`\r\x1b[K${line}${done === total ? '\n' : ''}`);
    else io.err(`${line}\n`);
  };
}
