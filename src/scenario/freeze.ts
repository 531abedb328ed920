import type { Conversation } from '../types.js';

/**
 * Freezes a conversation and everything it holds (its turns and messages),
 * once: every policy replayed over it is given the same message objects, so
 * one that changed a message would change what the others send (and what the
 * replay cache keeps). A policy that assigns to one then throws instead (a
 * module is strict). Freezing a frozen conversation costs one check.
 */
export function freezeConversation(conversation: Conversation): void {
  deepFreeze(conversation);
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}
