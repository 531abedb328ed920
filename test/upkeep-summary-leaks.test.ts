import { describe, expect, it } from 'vitest';
import { normalize, words } from '../src/text/normalize.js';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { shapeSpans } from '../src/upkeep/shapes.js';
import { thirdSingular, VERBS } from '../src/upkeep/statements.js';
import { summarize } from '../src/upkeep/summarizer.js';
import { allShipped } from './_policies.js';

/**
 * A summary states only what the folded text holds: each of its statements
 * is a sentence of a folded message in the third person, so every value in
 * it (an identifier, an e-mail, an amount, a date, a time…) and every word of
 * it is one the text holds, but for the words the writing adds (the speaker's
 * and the listener's names for `I` and `you`, `is` for `am`, a verb's third
 * person for its first, `returned` and `called` for a tool's work). No value is carried by a sentence the text
 * never said. (Resolved relative times are values the text implies: see
 * upkeep-times.test.ts; the shipped scenarios state no session date.)
 */

const tokens = new TokenCounter('chars4');

/** The summary of the folded exchanges, every statement kept, with room for every sentence. */
const summaryOf = (folded: Message[]) => summarize({ tokens, random: () => 0.5, model: 'gpt-4o-mini', summaryTokens: 100_000, keep: 1, folded }).summary;

/** Words a statement's writing adds: third-person forms, the roles that stand for `I` and `you`, a tool's frame. */
const WRITTEN = new Set(
  "the user user’s user's assistant assistant’s assistant's is has would will does doesn’t doesn't was wasn’t wasn't they they're they've they'll they'd their them themselves are have called returned with".split(' '),
);

/** The third persons the writing may give the verbs `held` has (`flies`, `goes`, `wants` for `fly`, `go`, `want`): of the verbs it makes agree, no other word. */
const agreeing = (held: Set<string>) => new Set([...held].filter((w) => VERBS.has(w)).map(thirdSingular));

/** The words and the fixed-shape values of `statements` (default: those of `folded`'s summary) that the text of `folded` does not hold. */
function unsaid(folded: Message[], statements: Iterable<string> = summaryOf(folded).facts.values()): string[] {
  const text = normalize(folded.map((m) => [m.content, ...(m.toolCalls ?? []).flatMap((c) => [c.name, c.arguments]), m.name ?? ''].join('\n')).join('\n'));
  const held = new Set(words(text));
  const agreed = agreeing(held);
  const out: string[] = [];
  for (const statement of statements) {
    for (const s of shapeSpans(statement)) if (!text.includes(normalize(s.text))) out.push(s.text);
    // A tool result's line is cut after 120 characters: the word it ends in may be cut too.
    const said = words(normalize(statement.replace(/[\p{L}\p{N}_-]+…$/u, '')));
    for (const w of said) if (!held.has(w) && !WRITTEN.has(w) && !agreed.has(w)) out.push(w);
  }
  return out;
}

describe('a summary holds no value the folded text does not hold', () => {
  it('on every shipped scenario, folded whole: every value and every word of every statement is in the text', () => {
    const all = allShipped();
    expect(all.length).toBeGreaterThanOrEqual(5);
    let statements = 0;
    for (const c of all) {
      const folded = c.turns.flatMap((t) => [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])]);
      statements += summaryOf(folded).facts.size;
      expect(unsaid(folded), c.id).toEqual([]);
    }
    // The check reads something: the scenarios state many things.
    expect(statements).toBeGreaterThan(50);
  });

  it('writes the speaker and the listener for I and you, and nothing else the text did not say', () => {
    const folded: Message[] = [
      { role: 'user', content: 'Hi! It costs Rs\u00a0249 a month, and I pay by card.', turn: 1 },
      { role: 'assistant', content: 'Got it, your plan renews on 2025-03-12.', turn: 1 },
    ];
    const s = summaryOf(folded);
    expect([...s.facts.values()]).toEqual(['It costs Rs\u00a0249 a month, and the user pays by card.', 'The user’s plan renews on 2025-03-12.']);
    expect(unsaid(folded)).toEqual([]);
    // The check can fail: a value or a word the text never held is found.
    expect(unsaid(folded, ['Got it, the user’s plan renews on 2025-03-13.', 'The user sends cash.'])).toEqual(['2025-03-13', '2025-03-13', 'sends', 'cash']); // the date as a value and as a word
    // A short line with a date in a sentence is no session's date line: the date is a statement's, not a day the talk happened on.
    expect([...s.facts.values()].join(' ')).not.toContain('talked');
  });

  it('a value lost to keep appears in no other statement', () => {
    const folded: Message[] = [
      { role: 'user', content: 'My order is SE-10423. My email is kavya@old.example.', turn: 1 },
      { role: 'assistant', content: 'Thanks, noted.', turn: 1 },
    ];
    const draws = [0.9, 0.1];
    const s = summarize({ tokens, random: () => draws.shift()!, model: 'm', summaryTokens: 200, keep: 0.5, folded }).summary;
    expect([...s.facts.values()]).toEqual(['The user’s email is kavya@old.example.']);
    expect(normalize(s.message.content)).not.toContain('se-10423');
  });
});
