import { ctxsimVersion } from '../process.js';

/**
 * The SHA-256 of the engine's golden outputs at each engine version, oldest
 * first: the records a fixed study makes (every built-in policy on the
 * shipped scenarios: with simulated upkeep, at the default settings and at
 * every other setting of the spec; and with recorded upkeep — summaries,
 * extractions and embeddings replayed from a cassette — with answers to
 * probe turns and a judge) and the record hashes the benchmark wrote
 * (bench/*.md).
 * test/engine-version.test.ts holds the last to what the engine makes now;
 * when a replay makes other records for the same inputs (a built-in policy,
 * pricing, scoring or the turn loop changed), that test fails and names the
 * new hash, to append here in the same commit.
 */
export const GOLDEN_HASHES = [
  '25f38655bdf58d01e01791a958c63b77694baa8668f46399703359ca7c747cda',
  // The golden study gained a second run, of every other setting of the spec (no record changed).
  'dfe62ee2d235801bc67aa9130ca9ef29d815520b6eecd636b8a2cc221ddd2644',
  // The golden study gained a third run, of recorded upkeep with answers and a judge (no record changed).
  '758cd96a30a18c580fc519d1d9803e281dc275fed01930af4c6fb97352025920',
  // Probe, summary and policy records gained judged_unsent; a judge's yes on a value not sent no longer counts as answered.
  '3e6bd550bc64602b358a3299299f3980a63e336a54336a3395e10f90a32f8aab',
  // Simulated summaries and fact sheets are made of third-person statements, not span lists and topic sentences.
  'e68e2064c0cf4a054f9405d3eb2dd859b3882317ba85c4adade75a608c4c72fc',
  // Budgets and thresholds count the tool definitions and the unlogged prefix as part of every prompt (the second run's toolDefs: summary-buffer, priority, window-tokens keep less).
  '25220fa339d3bc32dae00838adcd5e58e0002de96d34d470cd45aea76abfe365',
  // The simulated extractor answers on one line, as its instruction asks: an extraction's output tokens move by a token or two.
  '9cab00f9672a31e11979ad9aea462636b906c16453e05baff3a8382fe8744da0',
  // Simulated statements write a present verb in the third person, give a sentence said without its subject the speaker, and leave an acknowledgement out.
  'fc9509632a86975cb89d4a2222a44f92897cd35d7fcb5af9e7d47631e7204e9b',
  // A conversation's memory is simulated or recorded only where upkeep made a memory in it (summary on a short conversation: none).
  '03d91f5f6e95b909e67e651db242fde7655481ab0b709c572bc6ddb5ff79798b',
] as const;

/**
 * The engine's version: what the replay cache's keys say of ctxsim's code,
 * one more with each golden hash above, so that no unit is served from
 * before a change. Nothing else of the code is in the key: editing a
 * reporter, the CLI or the docs keeps the cache warm.
 */
export const ENGINE_VERSION = GOLDEN_HASHES.length;

let id: string | undefined;

/** What the replay cache's keys hold of ctxsim's code: its version and ENGINE_VERSION. Read once per thread. */
export function engineId(): string {
  id ??= `ctxsim@${ctxsimVersion()} engine@${ENGINE_VERSION}`;
  return id;
}
