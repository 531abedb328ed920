import { replayContext, type ModelContext } from '../engine/run.js';
import { UsageError } from '../errors.js';
import { loadPrices } from '../pricing/load.js';
import { lookup, type PriceTable } from '../pricing/prices.js';
import { grouped, plural } from '../records/format.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { TokenizerName } from '../tokens/encoding.js';
import type { Conversation } from '../types.js';
import { billedCounts, hasBilledCalls } from './billed.js';

/** What `calibrateTokenFactor` fits against. */
export interface CalibrateOptions {
  /** The model every transcript is fitted as (default: the model each one names, `model:`). */
  model?: string;
  /** `builtin`, a LiteLLM-format table (a path) laid over it, or a loaded table: the models must be in it. Default `builtin`. */
  prices?: string | PriceTable;
}

/** One billed call of a transcript, as ctxsim counts it (under `full`, factor 1) and as the provider billed it. */
export interface CalibrationCall {
  scenario: string;
  /** Its number among the transcript's billed calls, from 1. */
  call: number;
  /** Prompt tokens the provider billed. */
  billed: number;
  /** ctxsim's count of the prompt, the unlogged prefix included (`SentCall.promptTokens`). */
  counted: number;
  /** Of `counted`, the unlogged prefix (pinned: a factor leaves it as it is). */
  unlogged: number;
  /** Of `counted − unlogged`, the tokens of texts, which a factor multiplies; the rest are per-message constants, which it does not. */
  scaled: number;
  /** Whether the fit uses it: not the first billed call of a transcript with an unlogged prefix, which sized the prefix. */
  fitted: boolean;
}

/** A prediction of a left-out transcript's (or call's) billed prompt tokens from a factor fitted without it. */
export interface LeftOut {
  scenario: string;
  /** The left-out call, when calls are left out. */
  call?: number;
  /** The factor fitted on the rest. */
  factor: number;
  predicted: number;
  billed: number;
  /** predicted ÷ billed − 1. */
  error: number;
  /** ctxsim's count of the same calls without a factor (the prefix included): the error calibration started from. */
  counted: number;
}

/**
 * How well the factor predicts a bill it was not fitted on: the mean
 * absolute and the worst leave-one-out error, beside the uncalibrated mean
 * absolute error of the same transcripts (or calls).
 */
export interface CalibrationError {
  /** True when transcripts were left out (two or more): an error out of sample. False: calls of the one transcript, an optimistic bound. */
  outOfSample: boolean;
  meanAbs: number;
  worst: LeftOut;
  uncalibrated: number;
}

/** The fit for one model. */
export interface ModelCalibration {
  model: string;
  /** The tokenizer ctxsim counts the model with (`tokenizer: auto`). */
  tokenizer: TokenizerName;
  /** True when that tokenizer stands in for the model's own (not published): the factor corrects it. False: it is the model's own, no factor is needed. */
  estimate: boolean;
  /** The transcripts fitted, by id, in the order given. */
  transcripts: string[];
  calls: CalibrationCall[];
  /** Σ(billed − unlogged − constants) ÷ Σ scaled over the fitted calls; undefined when no call can be fitted. */
  factor?: number;
  /** The factor to three decimals, as the study line writes it. */
  rounded?: number;
  /** Over every billed call: ctxsim's count at factor 1, the prefix included, and the bill. */
  counted: number;
  billed: number;
  /** Over every billed call: ctxsim's count replayed with `tokenFactor: {model: rounded}` (a stand-in with a factor only). */
  calibrated?: number;
  /** What leave-one-out leaves out: a transcript when the model has two or more, else a fitted call. */
  leaveOut: 'transcript' | 'call';
  /** One prediction per transcript (or fitted call) whose fit on the rest is possible. */
  loo: LeftOut[];
  /** The error of the fit, from `loo`: out of sample with two or more transcripts; none when nothing could be predicted. */
  error?: CalibrationError;
}

/** A transcript not fitted, with why. */
export interface SkippedTranscript {
  scenario: string;
  reason: string;
}

export interface Calibration {
  models: ModelCalibration[];
  skipped: SkippedTranscript[];
}

/**
 * Fits a `tokenFactor` per model from the billed usage of imported agent
 * transcripts. Each billed call's prompt is counted under `full` on the
 * model's tokenizer with factor 1, and again with factor 2, which splits the
 * count into the tokens of texts (which a factor multiplies, rounded per
 * text) and the per-message constants (which it leaves). The unlogged prefix
 * is pinned and left as it is. The factor is the ratio of sums over the
 * fitted calls, Σ(billed − prefix − constants) ÷ Σ text tokens, so the
 * calibrated count of those calls adds up to their bill; each transcript's
 * first billed call is left out of the fit when it has an unlogged prefix
 * (that call sized the prefix). The error (`error`) is out of sample when
 * the model has two or more transcripts: each predicted from the fit on the
 * others. With one, each fitted call is predicted from the others instead:
 * an optimistic bound (a session's calls share most of their text; on real
 * sessions it understated the error on another session 2–10×), which
 * `calibrationReport` says plainly. Transcripts without per-call usage are
 * skipped; none with it is a usage error.
 */
export function calibrateTokenFactor(conversations: readonly Conversation[], options: CalibrateOptions = {}): Calibration {
  const skipped: SkippedTranscript[] = [];
  const byModel = new Map<string, Conversation[]>();
  const prices = typeof options.prices === 'object' ? options.prices : loadPrices(options.prices ?? 'builtin');
  for (const c of conversations) {
    if (!hasBilledCalls(c)) {
      skipped.push({ scenario: c.id, reason: c.billed ? 'its bill is a total, not per call' : 'no billed usage' });
      continue;
    }
    const model = options.model ?? c.model;
    if (model === undefined) throw new UsageError(`${c.source}: names no model (model:): give the model it ran on with --model`);
    if (options.model === undefined) {
      try {
        lookup(prices, model);
      } catch (e) {
        throw e instanceof UsageError ? new UsageError(`${c.source}: model: ${e.message}; give one the price table knows with --model`) : e;
      }
    }
    byModel.set(model, [...(byModel.get(model) ?? []), c]);
  }
  if (!byModel.size) {
    throw new UsageError(`calibrate: no transcript records billed usage per call (${plural(conversations.length, 'scenario')} read): import agent transcripts that do (claude-code, swe-agent, openai, anthropic)`);
  }
  const counters = new Map<string, TokenCounter>();
  const contextAt = (model: string, factor: number): ModelContext =>
    replayContext({ seed: 0, model, tokenizer: 'auto', ...(factor !== 1 && { tokenFactor: { [model]: factor } }), prices, cacheFolder: false }, counters);
  const models = [...byModel].map(([model, transcripts]) => calibrateModel(model, transcripts, contextAt));
  return { models, skipped };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** What a factor predicts for a call: the prefix and the constants as they are, the texts multiplied. */
const predictedTokens = (c: CalibrationCall, factor: number): number => c.counted + (factor - 1) * c.scaled;

/** The ratio of sums over calls: Σ(billed − unlogged − constants) ÷ Σ scaled; undefined without text to scale. */
function fitFactor(calls: readonly CalibrationCall[]): number | undefined {
  const scaled = sum(calls.map((c) => c.scaled));
  return scaled > 0 ? sum(calls.map((c) => c.billed - (c.counted - c.scaled))) / scaled : undefined;
}

function leftOut(scenario: string, call: number | undefined, factor: number, calls: readonly CalibrationCall[]): LeftOut {
  const predicted = sum(calls.map((c) => predictedTokens(c, factor)));
  const billed = sum(calls.map((c) => c.billed));
  return { scenario, ...(call !== undefined && { call }), factor, predicted, billed, error: predicted / billed - 1, counted: sum(calls.map((c) => c.counted)) };
}

function calibrateModel(model: string, transcripts: readonly Conversation[], contextAt: (model: string, factor: number) => ModelContext): ModelCalibration {
  const once = contextAt(model, 1);
  const twice = contextAt(model, 2);
  const byTranscript = transcripts.map((t) => {
    const at1 = billedCounts(t, once);
    const at2 = billedCounts(t, twice);
    // Counted with every text doubled (exact: 2 × a whole count needs no rounding), the difference is the texts' share.
    return at1.map((r, i): CalibrationCall => ({ scenario: t.id, call: i + 1, billed: r.billed, counted: r.counted, unlogged: r.unlogged, scaled: at2[i]!.counted - r.counted, fitted: i > 0 || r.unlogged === 0 }));
  });
  const calls = byTranscript.flat();
  const fitted = calls.filter((c) => c.fitted);
  const factor = fitFactor(fitted);
  const rounded = factor === undefined ? undefined : Math.round(factor * 1000) / 1000;
  const estimate = once.encoding.estimate;
  let calibrated: number | undefined;
  if (estimate && rounded !== undefined && rounded > 0) {
    const ctx = contextAt(model, rounded);
    calibrated = sum(transcripts.flatMap((t) => billedCounts(t, ctx).map((r) => r.counted)));
  }
  const leaveOut = transcripts.length >= 2 ? 'transcript' : 'call';
  const loo: LeftOut[] = [];
  if (leaveOut === 'transcript') {
    byTranscript.forEach((own, i) => {
      const f = fitFactor(byTranscript.flatMap((other, j) => (j === i ? [] : other.filter((c) => c.fitted))));
      if (f !== undefined) loo.push(leftOut(transcripts[i]!.id, undefined, f, own));
    });
  } else {
    for (const c of fitted) {
      const f = fitFactor(fitted.filter((o) => o !== c));
      if (f !== undefined) loo.push(leftOut(c.scenario, c.call, f, [c]));
    }
  }
  const error = errorOf(loo, leaveOut === 'transcript');
  return {
    model,
    tokenizer: once.encoding.name,
    estimate,
    transcripts: transcripts.map((t) => t.id),
    calls,
    ...(factor !== undefined && { factor, rounded }),
    counted: sum(calls.map((c) => c.counted)),
    billed: sum(calls.map((c) => c.billed)),
    ...(calibrated !== undefined && { calibrated }),
    leaveOut,
    loo,
    ...(error && { error }),
  };
}

/** The mean absolute and the worst leave-one-out error (undefined without predictions). */
function errorOf(loo: readonly LeftOut[], outOfSample: boolean): CalibrationError | undefined {
  if (!loo.length) return undefined;
  const worst = loo.reduce((w, l) => (Math.abs(l.error) > Math.abs(w.error) ? l : w));
  const mean = (f: (l: LeftOut) => number) => sum(loo.map(f)) / loo.length;
  return { outOfSample, meanAbs: mean((l) => Math.abs(l.error)), worst, uncalibrated: mean((l) => Math.abs(l.counted / l.billed - 1)) };
}

/** A signed percentage with two decimals: `+2.31%`, `−8.60%`. */
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${(Math.abs(x) * 100).toFixed(2)}%`;


/** A model name as a YAML key: plain when it can be, else quoted. */
const yamlKey = (name: string) => (/^[A-Za-z0-9][\w./-]*$/.test(name) ? name : JSON.stringify(name));

/**
 * The study line of a calibration: `tokenFactor: {claude-sonnet-4-5-20250929: 1.149}`,
 * one entry per model counted with a stand-in that could be fitted; undefined when there is none.
 */
export function tokenFactorLine(c: Calibration): string | undefined {
  const entries = c.models.filter((m) => m.estimate && m.rounded !== undefined && m.rounded > 0);
  if (!entries.length) return undefined;
  return `tokenFactor: {${entries.map((m) => `${yamlKey(m.model)}: ${m.rounded!.toFixed(3)}`).join(', ')}}`;
}

/**
 * The error lines of a fit: with two or more transcripts, each predicted from
 * the fit on the others (out of sample); with one, said plainly, and its
 * calls' leave-one-out as the optimistic bound it is.
 */
function errorLines(m: ModelCalibration): string[] {
  const e = m.error;
  const unit = m.leaveOut;
  const figures = (x: CalibrationError) => {
    const where = `${x.worst.scenario}${x.worst.call === undefined ? '' : ` call ${x.worst.call}`}`;
    return `mean |error| ${(x.meanAbs * 100).toFixed(2)}%, worst ${signed(x.worst.error)} (${where}) over ${plural(m.loo.length, unit)}; uncalibrated, mean |error| ${(x.uncalibrated * 100).toFixed(2)}%`;
  };
  if (unit === 'transcript') {
    return [e ? `  error (out of sample: each transcript predicted from the fit on the others): ${figures(e)}` : '  error: too few transcripts with calls to fit to leave one out'];
  }
  return [
    '  one transcript only: no error out of sample (give two or more transcripts of the model: each is then predicted from the fit on the others)',
    e
      ? `  leave one call out: ${figures(e)}: an optimistic bound, its calls sharing most of their text (on real sessions it understates the error on another session 2–10×)`
      : '  leave one call out: too few calls to fit without one',
  ];
}

/** What `ctxsim calibrate` prints: per model, the fit, its error out of sample (or, with one transcript, the bound leaving calls out gives), the count in sample; then the study line to paste. */
export function calibrationReport(c: Calibration): string {
  const lines: string[] = [];
  for (const m of c.models) {
    const fittedCalls = m.calls.filter((k) => k.fitted).length;
    lines.push(
      `${m.model} · ${m.tokenizer} (${m.estimate ? 'estimate' : 'exact'}) · ${plural(m.transcripts.length, 'transcript')}, ${plural(m.calls.length, 'billed call')}, ${grouped(fittedCalls)} fitted`,
    );
    const uncalibrated = `ctxsim counts ${grouped(m.counted)} prompt tokens, the provider billed ${grouped(m.billed)} (${signed(m.counted / m.billed - 1)})`;
    if (m.factor === undefined) {
      lines.push(`  no factor: no call to fit (a transcript's first billed call sized its unlogged prefix)`, `  uncalibrated: ${uncalibrated}`, '');
      continue;
    }
    if (!m.estimate) {
      lines.push(
        `  no factor needed: ${m.tokenizer} is ${m.model}’s own tokenizer (billed ÷ counted on the logged text: ${m.factor.toFixed(3)}; what is left is framing the log does not keep)`,
        `  as counted: ${uncalibrated}`,
        '',
      );
      continue;
    }
    lines.push(`  factor ${m.rounded!.toFixed(3)}: billed ÷ counted over the fitted calls’ logged text`, `  uncalibrated: ${uncalibrated}`);
    lines.push(...errorLines(m));
    if (m.calibrated !== undefined) {
      lines.push(`  calibrated in sample: ctxsim counts ${grouped(m.calibrated)} with tokenFactor ${m.rounded!.toFixed(3)} (${signed(m.calibrated / m.billed - 1)}): the transcripts it was fitted on, close by construction`);
    }
    lines.push('');
  }
  const line = tokenFactorLine(c);
  if (line) {
    lines.push('Paste into the study (a key must be the model’s name as the study’s models: gives it):', line);
  } else lines.push('No factor to paste: every model fitted is counted with its own tokenizer, or had no call to fit.');
  return `${lines.join('\n')}\n`;
}
