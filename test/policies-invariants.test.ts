import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import { POLICIES } from '../src/policies/index.js';
import { conversation, scenarioDoc, variant } from './_conv.js';
import { drive } from './_drive.js';
import { brokenInvariants } from './_invariants.js';

/** Specs exercised for every registered policy: defaults and small parameters that force eviction. */
const SPECS: Record<string, string[]> = {
  full: ['full', 'full:sessionCap=3'],
  'window-turns': ['window-turns:turns=0', 'window-turns:turns=2', 'window-turns:turns=3,sessionCap=4'],
  'window-tokens': ['window-tokens:budget=1', 'window-tokens:budget=40', 'window-tokens:budget=300'],
  window: ['window:turns=4,budget=30', 'window:turns=10,budget=200'],
};

describe('invariants of every policy (property test)', () => {
  it('every registered policy has specs here', () => {
    expect(POLICIES.map((p) => p.id).filter((id) => !SPECS[id])).toEqual([]);
  });

  for (const [id, specs] of Object.entries(SPECS)) {
    for (const spec of specs) {
      it(`${spec}: system first, current turn sent, user first, tool pairs intact, budget kept or flagged`, () => {
        const v = variant(spec);
        const budget = v.params.budget as number | undefined;
        fc.assert(
          fc.property(scenarioDoc, fc.constantFrom('chars4' as const, 'o200k_base' as const), (doc, enc) => {
            const conv = conversation(doc);
            const tokens = new TokenCounter(enc);
            for (const call of drive(conv, v, tokens)) {
              const broken = brokenInvariants(conv, call.plan, call.pending, tokens, budget);
              if (broken.length) throw new Error(`${id} turn ${call.turn}: ${broken.join('; ')}`);
            }
          }),
          { seed: 42, numRuns: 60 },
        );
      });
    }
  }
});
