import { z } from 'zod';
import type { PolicyVariant } from '../policies/spec.js';
import type { ParamValue } from '../policies/types.js';
import type { Conversation } from '../types.js';
import { TABLE_SORTS } from './table-sort.js';

/**
 * The report settings: what the reports say of the records (a threshold of
 * the verdict, the layout of report.md's budget table), which a study
 * gives and the report info carries, so that a merged run's reports read
 * them too. Each is declared here once, what it holds: the report info's
 * fields (`ReportSettings`) and the shard file's schema
 * (gate/shard.ts) follow; its meta, how a study file and a flag write it,
 * is its entry in `REPORT_SPEC` (report/settings.ts), which the type
 * checker asks of every key.
 */
export const REPORT_SETTINGS = z.strictObject({
  minRetention: z.number().min(0).max(1).optional().describe('the share of the probed facts the verdict’s pick must keep (default 0.95)'),
  minSaving: z.number().min(0).max(1).optional().describe('the saving against `full` below which no memory policy pays off (default 0.05)'),
  budgetColumns: z.array(z.string()).min(1).readonly().optional().describe('the columns of report.md’s budget table, in order'),
  budgetSort: z.enum(TABLE_SORTS).optional().describe('the row order of report.md’s budget table'),
});

/** The report settings, as a study and the report info hold them (each when set). */
export type ReportSettings = z.output<typeof REPORT_SETTINGS>;

/**
 * What reports say about the run besides its records: the resolved study
 * (model, tokenizer, prices, seed, scenarios, policies) and the report
 * settings it gives (`ReportSettings`). Plain data, so it goes into
 * `results.json` as it is; paths are as displayed, never absolute.
 */
export interface ReportInfo extends ReportSettings {
  /** The study file as displayed, or null for the built-in default study. */
  studyFile: string | null;
  /**
   * The lists of the study (or of the built-in default study) the command
   * line replaced: its scenarios (`--scenario`), policies (`--policy`) or
   * models (`--model`); absent when it replaced none.
   */
  fromCommandLine?: StudyList[];
  seed: number;
  /** The first chat model (`models` lists each). */
  model: string;
  /** The tokenizer as asked for (`auto`, `o200k_base`, …). */
  tokenizer: string;
  /** The encoding the first chat model used. */
  encoding: string;
  /** True when that encoding is a stand-in for a model that is not OpenAI's. */
  encodingEstimate: boolean;
  /** `builtin` or the price table file as displayed. */
  prices: string;
  /** The price table's snapshot date. */
  priceDate: string;
  cache: string;
  /** The first chat model's context window, when the price table knows it. */
  maxInputTokens: number | null;
  /** Every chat model of the run, in the study's order: a report row is a policy on one of them. */
  models: ModelInfo[];
  scenarios: ScenarioInfo[];
  policies: PolicyInfo[];
  /**
   * Present when summaries, extractions and embeddings are a real model's
   * responses: the cassette they were replayed from; `answers` when the
   * probes were also scored on the chat model's recorded answers; `judge`
   * the model that graded the answers that did not hold a value as written.
   */
  upkeep?: { recorded: string; answers?: true; judge?: string };
}

/** The lists that say what a study runs: its conversations, its policies, its chat models. */
export const STUDY_LISTS = ['scenarios', 'policies', 'models'] as const;
export type StudyList = (typeof STUDY_LISTS)[number];

/** A chat model of the run: its encoding and context window. */
export interface ModelInfo {
  model: string;
  encoding: string;
  encodingEstimate: boolean;
  /** The study's `tokenFactor` for the model, when not 1. */
  tokenFactor?: number;
  maxInputTokens: number | null;
}

export interface ScenarioInfo {
  id: string;
  title: string | null;
  source: string;
  turns: number;
  /** Tokens of the stand-in for what the transcript's log leaves out of every prompt (`unlogged_prefix`, sized from its bill), when it has one. */
  unloggedTokens?: number;
  /** The scenario's weight in the weighted means (cost per conversation, retention), when not 1. */
  weight?: number;
}

export interface PolicyInfo {
  /** Canonical name, as in every output. */
  name: string;
  id: string;
  /** Resolved parameters, defaults filled in (unset ones left out). */
  params: Record<string, ParamValue>;
}

/** What `reportInfo` needs from a study and its run. */
export interface InfoSource {
  studyFile: string | null;
  fromCommandLine?: readonly StudyList[];
  seed: number;
  /** Each chat model, its encoding and context window. */
  models: readonly { model: string; encoding: { name: string; estimate: boolean; factor?: number }; maxInputTokens: number | undefined }[];
  tokenizer: string;
  prices: string;
  priceDate: string;
  cache: string;
  /** The study's conversations, or as much of them as the reports use. */
  conversations: readonly ScenarioShape[];
  policies: readonly PolicyVariant[];
  upkeep?: ReportInfo['upkeep'];
  /** The report settings the study gives. */
  report?: ReportSettings;
}

/** What the reports use of a conversation: where it comes from, how long it is, and its unlogged prefix. */
export type ScenarioShape = Pick<Conversation, 'id' | 'title' | 'source' | 'unloggedTokens' | 'weight'> & { turns: { length: number } };

/** A conversation's shape, without its messages. */
export function scenarioShape(c: ScenarioShape): ScenarioShape {
  return {
    id: c.id,
    ...(c.title !== undefined && { title: c.title }),
    source: c.source,
    turns: { length: c.turns.length },
    ...(c.unloggedTokens !== undefined && { unloggedTokens: c.unloggedTokens }),
    ...(c.weight !== undefined && { weight: c.weight }),
  };
}

/** Builds the report info from the resolved study and what the run used. */
export function reportInfo(s: InfoSource): ReportInfo {
  const models = s.models.map(
    (m): ModelInfo => ({
      model: m.model,
      encoding: m.encoding.name,
      encodingEstimate: m.encoding.estimate,
      ...(m.encoding.factor !== undefined && { tokenFactor: m.encoding.factor }),
      maxInputTokens: m.maxInputTokens ?? null,
    }),
  );
  const first = models[0]!;
  return {
    studyFile: s.studyFile,
    ...(s.fromCommandLine?.length && { fromCommandLine: [...s.fromCommandLine] }),
    seed: s.seed,
    model: first.model,
    tokenizer: s.tokenizer,
    encoding: first.encoding,
    encodingEstimate: first.encodingEstimate,
    prices: s.prices,
    priceDate: s.priceDate,
    cache: s.cache,
    maxInputTokens: first.maxInputTokens,
    models,
    scenarios: s.conversations.map((c) => ({
      id: c.id,
      title: c.title ?? null,
      source: c.source,
      turns: c.turns.length,
      ...(c.unloggedTokens !== undefined && { unloggedTokens: c.unloggedTokens }),
      ...(c.weight !== undefined && c.weight !== 1 && { weight: c.weight }),
    })),
    policies: s.policies.map((v) => ({
      name: v.name,
      id: v.policy.id,
      params: Object.fromEntries(Object.entries(v.params).filter((e): e is [string, ParamValue] => e[1] !== undefined)),
    })),
    ...(s.upkeep && { upkeep: s.upkeep }),
    ...s.report,
  };
}

/** `o200k_base`, `o200k_base (estimate)` when it stands in for another provider's tokenizer, `… × 1.2` with a token factor. */
export function tokenizerLabel(info: Pick<ModelInfo, 'encoding' | 'encodingEstimate' | 'tokenFactor'>): string {
  return `${info.encoding}${info.encodingEstimate ? ' (estimate)' : ''}${info.tokenFactor !== undefined ? ` × ${info.tokenFactor}` : ''}`;
}

/** The one-line caption under every table and chart: the models, price-table date, tokenizers (each once). */
export function caption(info: Pick<ReportInfo, 'models' | 'priceDate'>): string {
  const tokenizers = [...new Set(info.models.map(tokenizerLabel))];
  return `${info.models.map((m) => m.model).join(', ')} · prices of ${info.priceDate} · tokenizer ${tokenizers.join(', ')}`;
}
