import { CtxsimError } from '../errors.js';
import type { UpkeepPrompts } from './prompts.js';

// Apart from upkeep.ts: what reads these (a policy module's link, a session's guard) loads neither the simulated upkeep nor the cassette.

/**
 * What an upkeep was made of: simulated or recorded, and its prompts. A
 * policy module's session runs on the module's own thread: there it
 * simulates alike, with the same prompts (and draws from its own stream),
 * or asks this upkeep for each recorded response.
 */
export interface UpkeepOrigin {
  prompts: UpkeepPrompts;
  recorded: boolean;
}

const ORIGINS = new WeakMap<object, UpkeepOrigin>();

/** `upkeep`, marked as made of `origin` (`simulatedUpkeep`, `recordedUpkeep`). */
export function madeOf<U extends object>(upkeep: U, origin: UpkeepOrigin): U {
  ORIGINS.set(upkeep, origin);
  return upkeep;
}

/** What `simulatedUpkeep` or `recordedUpkeep` made `upkeep` of; undefined for an upkeep made otherwise. */
export function upkeepOrigin(upkeep: object): UpkeepOrigin | undefined {
  return ORIGINS.get(upkeep);
}

/** A replay needs a response its cassette lacks: a failure of the run, not of the policy that asked (the policy guard lets it through). */
export class CassetteMissError extends CtxsimError {
  constructor(message: string) {
    super(message, 'cassette-miss');
  }
}

