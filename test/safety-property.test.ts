import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { POLICIES } from '../src/policies/index.js';
import { policyViolations } from '../src/rules/blame.js';
import { RULE_SETS } from '../src/rules/provider.js';
import { generateConversations, PROFILES } from '../src/scenario/generate/index.js';
import type { Conversation, ForgetEvent } from '../src/types.js';
import { fixture, shipped, variant } from './_policies.js';
import { ROOT } from './_shared.js';

/**
 * ctxsim's own policies never build a prompt a provider would reject: the
 * shipped scenarios, and 200 generated conversations per profile, through
 * every policy (small budgets, so that trimming, folding and retrieval
 * happen), checked against all three rule sets on every call. Each generated
 * conversation also gets a random forget event and injection turn, so
 * redaction, re-summarization, deleted vector entries and moderation are
 * exercised too.
 */

const SPECS = [
  'full',
  'window-turns:turns=3',
  'window-tokens:budget=300',
  'window:turns=4,budget=400',
  'summary:threshold=300,summaryTokens=60',
  'summary-buffer:budget=500,keepRecent=2,summaryTokens=80',
  'priority:budget=400,keepRecent=1,sessionCap=6',
  'retrieval:recent=2,topK=3,maxItems=20',
  'facts:recent=2',
];

/** Each spec under every forget × moderation mode; a run draws one mode per spec. */
const MODES = ['', ',forget=naive', ',moderation=drop', ',forget=naive,moderation=drop'];
const VARIANTS = SPECS.map((s) => MODES.map((m) => variant(`${s}${s.includes(':') ? m : m.replace(',', ':')}`)));

// Companion chats run 50–300 turns by default and coding sessions 10–60 with large code blocks; shorter
// ones keep 200 of each fast, and every turn is still the profile's own (prompts are trimmed well before).
const LENGTHS: Record<string, [number, number] | undefined> = { companion: [8, 40], coding: [10, 30] };

const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'chars4' });

/** The conversation with one forget event (of facts stated so far) and one injection turn, placed by the draws. */
function withSafetyEvents(c: Conversation, forgetAt: number, injectAt: number): Conversation {
  const after = 1 + (forgetAt % c.turns.length);
  const stated = [...new Set(c.turns.slice(0, after).flatMap((t) => Object.keys(t.facts)))];
  const forgets: ForgetEvent[] = stated.length ? [{ afterTurn: after, facts: stated.slice(0, 2) }] : [];
  const flagged = injectAt % c.turns.length;
  return { ...c, forgets, turns: c.turns.map((t, i) => (i === flagged ? { ...t, injection: true } : t)) };
}

/** Every provider-rule violation a policy causes in the conversation's prompts, under all three rule sets. */
function violationsOf(c: Conversation, v: (typeof VARIANTS)[number][number]): string[] {
  const out: string[] = [];
  replay(c, v, ctx, (turn, call) => {
    for (const set of RULE_SETS) for (const b of policyViolations(call.plan.messages, set, c)) out.push(`${c.id} ${v.name} turn ${turn} (${set}): ${b.detail}`);
  });
  return out;
}

describe('zero provider-rule violations from the real policies on shipped scenarios', () => {
  // The safety fixture has forget and injection events; the SPEC example a turn without a reply before the next one.
  const conversations = [
    ...readdirSync(join(ROOT, 'scenarios')).filter((f) => f.endsWith('.yaml')).sort().map(shipped),
    fixture('safety/forget-and-inject.yaml'),
    fixture('spec-example.yaml'),
  ];

  it.each(conversations.map((c) => [c.id, c] as const))('%s: every policy, every mode, every rule set', (_, c) => {
    expect(VARIANTS.flat().flatMap((v) => violationsOf(c, v))).toEqual([]);
  });
});

describe('zero provider-rule violations from the real policies on generated conversations', () => {
  it('covers every registered policy', () => {
    expect(new Set(VARIANTS.map((list) => list[0]!.policy.id))).toEqual(new Set(POLICIES.map((p) => p.id)));
    expect(VARIANTS[0]!.map((v) => v.name)).toEqual(['full', 'full:forget=naive', 'full:moderation=drop', 'full:forget=naive,moderation=drop']);
  });

  for (const profile of PROFILES.keys()) {
    it(`${profile}: 200 conversations`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 1e9 }), fc.nat(), fc.nat(), fc.array(fc.nat(3), { minLength: SPECS.length, maxLength: SPECS.length }), (seed, forgetAt, injectAt, modes) => {
          const turns = LENGTHS[profile];
          const [generated] = generateConversations({ profile, count: 1, seed, ...(turns && { params: { turns } }) });
          const c = withSafetyEvents(generated!, forgetAt, injectAt);
          for (const v of VARIANTS.map((list, i) => list[modes[i]!]!)) {
            const broken = violationsOf(c, v);
            if (broken.length) throw new Error(broken.join('\n'));
          }
        }),
        { seed: 42, numRuns: 200 },
      );
    });
  }
});
