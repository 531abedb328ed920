import { facts } from './facts.js';
import { full } from './full.js';
import { priority } from './priority.js';
import { retrieval } from './retrieval.js';
import { summary } from './summary.js';
import { summaryBuffer } from './summary-buffer.js';
import type { Policy } from './types.js';
import { window } from './window.js';
import { windowTokens } from './window-tokens.js';
import { windowTurns } from './window-turns.js';

/** Every policy, in the order reports list them: the windows, then the policies that remember. */
export const POLICIES: readonly Policy[] = [full, windowTurns, windowTokens, window, summary, summaryBuffer, priority, retrieval, facts];

export const REGISTRY: ReadonlyMap<string, Policy> = new Map(POLICIES.map((p) => [p.id, p]));
