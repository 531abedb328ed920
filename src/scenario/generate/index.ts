import { UsageError } from '../../errors.js';
import type { Conversation } from '../../types.js';
import { validateDocs, type ScenarioOut } from '../docs.js';
import { agent } from './agent.js';
import { coding } from './coding.js';
import { companion } from './companion.js';
import type { CommonProfileParams, Profile } from './profile.js';
import { Stream } from './stream.js';
import { support } from './support.js';
import { voiceAssistant } from './voice-assistant.js';

export type { Profile } from './profile.js';

/** Every profile, by id, in the order help lists them. */
export const PROFILES: ReadonlyMap<string, Profile> = new Map<string, Profile>(
  [support, voiceAssistant, coding, companion, agent].map((p) => [p.id, p]),
);

/** What to generate. `params` are profile overrides, already validated by the profile's schema. */
export interface GenerateRequest {
  profile: string;
  count: number;
  seed: number;
  /** Id prefix (default: the profile id): ids are `prefix-0001`, `prefix-0002`… */
  prefix?: string;
  params?: Partial<CommonProfileParams> & Record<string, unknown>;
}

/** The profile for an id, or a usage error listing the known ones. */
export function profileFor(id: string): Profile {
  const p = PROFILES.get(id);
  if (!p) throw new UsageError(`unknown profile "${id}"; expected one of ${[...PROFILES.keys()].join(', ')}`);
  return p;
}

/** The id of conversation k (1-based): zero-padded to 4 digits, more when count needs it. */
export function generatedId(prefix: string, k: number, count: number): string {
  return `${prefix}-${String(k).padStart(Math.max(4, String(count).length), '0')}`;
}

/**
 * Generates scenario documents. Conversation k draws only from its own
 * stream `${seed}:generate:${profile}:${k}`, so it does not depend on count.
 */
export function generateDocs(req: GenerateRequest): ScenarioOut[] {
  return [...generatedDocs(req)];
}

/** `generateDocs` one document at a time (each depends only on the seed and its number), for a caller that pauses between them. */
export function* generatedDocs(req: GenerateRequest): Generator<ScenarioOut> {
  const doc = docMaker(req);
  for (let k = 1; k <= req.count; k++) yield doc(k);
}

/** Document `k` (1-based) of `req`, made alone: what `generatedDocs(req)` yields k-th. */
function docMaker(req: GenerateRequest): (k: number) => ScenarioOut {
  const profile = profileFor(req.profile);
  const params = { ...profile.defaults, ...stripUndefined(req.params ?? {}) } as CommonProfileParams;
  const prefix = req.prefix ?? profile.id;
  return (k) => {
    const rng = new Stream(`${req.seed}:generate:${profile.id}:${k}`);
    const turns = rng.int(params.turns[0], params.turns[1]);
    return profile.build({ id: generatedId(prefix, k, req.count), rng, turns, params });
  };
}

/** Where a generated conversation says it comes from (its `source`): the request and its id. */
export function generatedSource(req: Pick<GenerateRequest, 'profile' | 'seed'>, id: string): string {
  return `generate:${req.profile}:seed=${req.seed}#${id}`;
}

/** Generates and validates conversations (the same validation scenario files get). */
export function generateConversations(req: GenerateRequest): Conversation[] {
  return validateDocs(generateDocs(req), (doc) => generatedSource(req, doc.id));
}

/**
 * Conversation `k` (1-based) of `req` made alone, when asked for: the
 * `k`-th of `generateConversations(req)`, validated as they are, without
 * making the others (a study's generated set is made a conversation at a
 * time as the run asks for it, never held whole).
 */
export function conversationMaker(req: GenerateRequest): (k: number) => Conversation {
  const doc = docMaker(req);
  return (k) => validateDocs([doc(k)], (d) => generatedSource(req, d.id))[0]!;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
