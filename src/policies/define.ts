import type { z } from 'zod';
import type { Conversation } from '../types.js';
import type { CommonParams } from './params.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { Policy, PolicyDeps, PolicySession, ToolView } from './types.js';

/** What a policy's session is given: its own parameters, as its schema types them, and the common ones; defaults filled in. */
export type PolicyParams<S extends z.ZodObject> = Readonly<z.output<S> & CommonParams>;

/**
 * Declares a policy: its parameters once, as a zod object of parameter
 * builders (`int`, `choice`, …), and `start`, whose `params` are typed by
 * that object — `params.turns` is a number, no cast.
 */
export function definePolicy<S extends z.ZodObject>(policy: {
  id: string;
  /** One line for `--help` and the docs. */
  describe: string;
  params: S;
  start(conversation: Conversation, params: PolicyParams<S>, deps: PolicyDeps): PolicySession;
  view?(params: PolicyParams<S>, tokens: TokenCounter): ToolView;
}): Policy<PolicyParams<S>> & { params: S } {
  return policy;
}
