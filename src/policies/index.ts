import { full } from './full.js';
import type { Policy } from './types.js';
import { window } from './window.js';
import { windowTokens } from './window-tokens.js';
import { windowTurns } from './window-turns.js';

/** Every policy, in the order reports list them. */
export const POLICIES: readonly Policy[] = [full, windowTurns, windowTokens, window];

export const REGISTRY: ReadonlyMap<string, Policy> = new Map(POLICIES.map((p) => [p.id, p]));
