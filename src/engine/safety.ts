import type { Artifact, ForgetFact } from '../policies/types.js';
import type { ArtifactKind, Message, Turn } from '../types.js';
import { injectionQuote } from '../upkeep/quote.js';
import { holds } from '../upkeep/redact.js';
import { normalize } from '../text/normalize.js';
import { findIn } from './score.js';

const KINDS: readonly ArtifactKind[] = ['transcript', 'summary', 'vectors', 'facts'];

/**
 * What memory must not keep, watched over one conversation:
 *
 * - Forgotten values. A forget event erases every value its facts had up to
 *   then. Such a value stays forgotten until a later turn states it again
 *   (the turn's own user message, tool calls and results or reply contain
 *   it, or its `facts:` give it): from that turn on it is a new statement,
 *   not a zombie. A prompt or artifact holding a still-forgotten value is a
 *   zombie.
 * - Injections. After a turn flagged `injection: true`, a prompt whose
 *   memory (everything before the current turn's messages) holds the turn's
 *   quote — its first words, which the verbatim message, a retrieved copy, a
 *   summary quoting it or a fact sheet storing it all contain — is exposed.
 */
export class SafetyWatch {
  /** normalized value → fact name. */
  private readonly forgotten = new Map<string, string>();
  private readonly marks: string[] = [];

  /** A new turn: values it states again are no longer forgotten. */
  startTurn(turn: Turn): void {
    if (!this.forgotten.size) return;
    const own = [turn.user, ...turn.tools, ...(turn.assistant ? [turn.assistant] : [])];
    const stated = new Set(Object.values(turn.facts).map(normalize));
    for (const v of [...this.forgotten.keys()]) {
      if (stated.has(v) || findIn(own, v) !== 'none') this.forgotten.delete(v);
    }
  }

  /** A forget event: its values are forgotten from now on. */
  forget(facts: readonly ForgetFact[]): void {
    for (const f of facts) for (const v of f.values) if (v) this.forgotten.set(v, f.name);
  }

  /** A turn is over: if it was an injection, later prompts are watched for it. */
  endTurn(turn: Turn): void {
    if (!turn.injection) return;
    const mark = normalize(injectionQuote(turn.user.content));
    if (mark) this.marks.push(mark);
  }

  /** The prompt holds a forgotten value. */
  zombieIn(messages: readonly Message[]): boolean {
    for (const v of this.forgotten.keys()) if (findIn(messages, v) !== 'none') return true;
    return false;
  }

  /** The memory part of a prompt — all but its last `pending` messages, the turn's own — holds an earlier injection. */
  exposedIn(messages: readonly Message[], pending: number): boolean {
    if (!this.marks.length) return false;
    const memory = messages.slice(0, messages.length - pending);
    return this.marks.some((mark) => findIn(memory, mark) !== 'none');
  }

  /** The kinds of artifact that still hold a forgotten value, in a fixed order. */
  zombies(artifacts: readonly Artifact[]): ArtifactKind[] {
    const values = [...this.forgotten.keys()];
    if (!values.length) return [];
    const hit = new Set(artifacts.filter((a) => a.texts.some((t) => holds(t, values))).map((a) => a.kind));
    return KINDS.filter((k) => hit.has(k));
  }
}
