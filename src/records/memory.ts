import type { MemoryKind } from '../types.js';

/** A policy as the memory it keeps is told by: its id and resolved parameters. */
interface PolicyParams {
  id: string;
  params: Readonly<Record<string, unknown>>;
}

/** What the simulated upkeep of each built-in policy that remembers rests on, from its parameters. */
const SIMULATED: Readonly<Record<string, (params: PolicyParams['params']) => string | undefined>> = {
  summary: (p) => `keep ${String(p.keep)}`,
  'summary-buffer': (p) => `keep ${String(p.keep)}`,
  retrieval: () => 'lexical embedding',
  facts: (p) => `recall ${String(p.recall)}`,
  compact: (p) => `keep ${String(p.keep)}`,
  // A pipeline remembers through its last stage.
  pipeline: (p) => {
    const last = String(p.stages).split('>').pop()!.trim();
    const id = last.split(':')[0]!;
    return id !== 'pipeline' && Object.hasOwn(SIMULATED, id) ? `via ${last}` : undefined;
  },
};

/** Whether a policy id is a built-in one that remembers through upkeep (or a pipeline, which may): its records need not be read to tell. */
export function builtInMemory(id: string): boolean {
  return Object.hasOwn(SIMULATED, id);
}

/** What a built-in policy's simulated upkeep rests on; undefined for one that does not remember through upkeep (or is not built in). */
export function simulatedOf(p: PolicyParams): string | undefined {
  return builtInMemory(p.id) ? SIMULATED[p.id]!(p.params) : undefined;
}

/**
 * Where a conversation's memory under a policy came from: none, when no
 * memory was made by upkeep — a policy that keeps none, or one that does but
 * made none in this conversation (a summary policy on a conversation too
 * short to summarize: what was sent is the messages themselves); else
 * simulated, or recorded when upkeep is a real model's. Whether upkeep
 * made one is `didUpkeep` (the conversation's records show upkeep tokens);
 * a built-in policy must also be one that remembers through it (by its id
 * and parameters: a pipeline through its last stage).
 */
export function memoryOf(p: PolicyParams, recorded: boolean, didUpkeep: boolean): MemoryKind {
  const remembers = didUpkeep && (!builtInMemory(p.id) || simulatedOf(p) !== undefined);
  return !remembers ? 'none' : recorded ? 'recorded' : 'simulated';
}
