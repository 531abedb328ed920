import { clearToolResults } from './clear-tool-results.js';
import { compact } from './compact.js';
import { facts } from './facts.js';
import { full } from './full.js';
import { maskObservations } from './mask-observations.js';
import { pipelinePolicy } from './pipeline.js';
import { priority } from './priority.js';
import { retrieval } from './retrieval.js';
import { summary } from './summary.js';
import { summaryBuffer } from './summary-buffer.js';
import type { Policy } from './types.js';
import { window } from './window.js';
import { windowTokens } from './window-tokens.js';
import { windowTurns } from './window-turns.js';

/** The chat policies, in the order reports list them: the windows, then the policies that remember (the default study runs these). */
export const CHAT_POLICIES: readonly Policy[] = [full, windowTurns, windowTokens, window, summary, summaryBuffer, priority, retrieval, facts];

/** The policies for tool-using agents: they act on tool results, inside a long turn too. */
export const AGENT_POLICIES: readonly Policy[] = [maskObservations, clearToolResults, compact, pipelinePolicy(() => REGISTRY)];

/** Every policy: the chat policies, then the agent policies. */
export const POLICIES: readonly Policy[] = [...CHAT_POLICIES, ...AGENT_POLICIES];

export const REGISTRY: ReadonlyMap<string, Policy> = new Map(POLICIES.map((p) => [p.id, p]));
