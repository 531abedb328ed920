import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { loadPrices } from '../pricing/load.js';
import { calibrateTokenFactor, calibrationReport } from '../study/calibrate.js';
import { flagModel, loadScenarios, scenarioFiles } from '../study/study.js';
import type { IO } from './_io.js';
import { flagSettings, oneSetting } from './_setting-flags.js';

export interface CalibrateFlags {
  transcripts: string[];
  /** One model every transcript is fitted as, as given (`run`'s `--model` is repeatable): `oneSetting` reads it. */
  model?: string;
  /** As given; `flagSettings` reads it. */
  prices?: string;
}

/** Transcript logs a calibration is given by mistake for scenario files: they are imported first. */
const NOT_SCENARIO = /\.(jsonl|traj|txt|log)$/i;

/** `ctxsim calibrate`: the fit on stdout (ending with the study line), the transcripts skipped on stderr. */
export function calibrate(flags: CalibrateFlags, io: IO): number {
  // --prices reads as a study's prices does (builtin, or a path from the working folder).
  const prices = loadPrices(flagSettings({ prices: flags.prices }).prices ?? 'builtin');
  if (flags.model !== undefined && !flags.model.trim()) throw new UsageError('--model: name a model, e.g. --model claude-sonnet-4-5');
  const model = oneSetting(flags, 'models');
  if (model !== undefined) flagModel(prices, model, '--model');
  const base = process.cwd();
  for (const pattern of flags.transcripts) {
    const direct = existsSync(resolve(base, pattern)) && statSync(resolve(base, pattern)).isFile();
    if (direct && NOT_SCENARIO.test(pattern)) {
      throw new UsageError(`${pattern}: a transcript log, not a scenario file: import it first (ctxsim import --format FORMAT ${pattern} --out DIR --unlogged-prefix billed)`);
    }
    if (!scenarioFiles(pattern, base).length) throw new UsageError(`${pattern}: no scenario file matches`);
  }
  const conversations = loadScenarios(flags.transcripts.map((pattern) => ({ kind: 'glob', pattern, base })));
  const result = calibrateTokenFactor(conversations, { prices, ...(model !== undefined && { model }) });
  if (result.skipped.length) io.err(`calibrate: skipped ${result.skipped.map((s) => `${s.scenario} (${s.reason})`).join(', ')}\n`);
  io.out(calibrationReport(result));
  return 0;
}
