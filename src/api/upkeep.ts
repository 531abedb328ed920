/**
 * `ctxsim/upkeep`: the calls a policy's memory makes besides the chat
 * (summaries, fact extraction) — simulated, recorded in a cassette or live —
 * with a study's upkeep settings, the prompts, and the summarizer's,
 * extractor's and vector store's types; and `checkUpkeep`, which holds the
 * simulated extractor and summarizer to a real model's memories of a
 * dataset's conversations (`ctxsim check-upkeep`).
 *
 * @packageDocumentation
 * @module ctxsim/upkeep
 */

export { defaultUpkeep, planText, upkeepPlan, UPKEEP_MODES, type UpkeepMode, type UpkeepOverrides, type UpkeepPlan, type UpkeepSettings } from '../recording/upkeep.js';
export { CassetteMissError } from '../upkeep/origin.js';
export { recordedUpkeep, simulatedUpkeep, type Miss, type MissHandler, type RecordedOptions, type Upkeep } from '../upkeep/upkeep.js';
export { Cassette, type BilledUsage, type CassetteEntry } from '../upkeep/cassette.js';
export { requestKey, type ChatMessage, type UpkeepRequest } from '../upkeep/request.js';
export { DEFAULT_PROMPTS, type UpkeepPrompts } from '../upkeep/prompts.js';
export type { ForgetSummaryRequest, SummarizeRequest, Summary } from '../upkeep/summarizer.js';
export type { ExtractRequest } from '../upkeep/extractor.js';
export type { Fact, Injected } from '../upkeep/types.js';
export type { Vector } from '../upkeep/embedder.js';
export type { Hit, Stored, VectorStore } from '../upkeep/store.js';
export {
  checkUpkeep,
  CHECK_UPKEEP_FORMATS,
  judgeUpkeep,
  memoryEntries,
  readUpkeepCases,
  simulateMemory,
  upkeepCheckReport,
  type CheckUpkeepOptions,
  type ConversationUpkeepCheck,
  type SimulatedMemory,
  type SimulateOptions,
  type UpkeepBudgets,
  type UpkeepCase,
  type UpkeepCheck,
  type UpkeepCheckTotal,
  type UpkeepDialogue,
  type UpkeepShares,
} from '../study/check-upkeep.js';
export { answerKeyWords, answerWords, holdsAnswer, memoryWords } from '../text/answers.js';
