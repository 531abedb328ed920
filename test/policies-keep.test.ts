import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { scenario, variant } from './_policies.js';

/** Eight facts in turns 1-8, small talk, then every fact probed at turn 14 and again at turn 24. */
function manyFacts() {
  const facts = Array.from({ length: 8 }, (_, i) => [`code_${i + 1}`, `K${i + 1}-${100 + i * 7}`] as const);
  const turns = [
    ...facts.map(([k, v]) => `  - user: Please note my ${k.replace('_', ' ')} is ${v}.\n    facts: {${k}: ${v}}\n    assistant: Noted.`),
    ...Array.from({ length: 16 }, (_, i) => {
      const probe = i === 5 || i === 15 ? `\n    probe: [${facts.map(([k]) => k).join(', ')}]` : '';
      return `  - user: Small talk number ${i + 1} about the weather and the weekend.${probe}\n    assistant: Sounds nice, tell me more about it.`;
    }),
  ];
  return scenario(`id: many-facts\nsystem: You are a friendly assistant.\nturns:\n${turns.join('\n')}\n`);
}

const conversation = manyFacts();
const run = (spec: string, seed: number) => {
  const ctx = replayContext({ seed, model: 'gpt-4o-mini', tokenizer: 'chars4' });
  return replay(conversation, variant(spec), ctx).probes.map((p) => `${p.turn}:${p.fact}:${p.outcome}`);
};
const retainedAt = (probes: string[], turn: number) => probes.filter((p) => p.startsWith(`${turn}:`) && p.endsWith(':retained')).map((p) => p.split(':')[1]);

describe('lossy summaries (keep)', () => {
  for (const spec of ['summary-buffer:keepRecent=4,keep=0.5', 'summary:threshold=200,keep=0.5']) {
    it(`${spec}: the same seed loses the same facts, another seed others`, () => {
      const a = run(spec, 42);
      expect(run(spec, 42)).toEqual(a);
      expect(run(spec, 43)).not.toEqual(a);
      // Lossy, not empty: some facts are lost, some still known at turn 14.
      expect(a.filter((p) => !p.endsWith(':retained')).length).toBeGreaterThan(0);
      expect(retainedAt(a, 14).length).toBeGreaterThan(0);
    });

    it(`${spec}: a fact lost by turn 14 is still lost at turn 24 (loss compounds)`, () => {
      for (const seed of [1, 2, 3, 42, 43]) {
        const probes = run(spec, seed);
        const early = retainedAt(probes, 14);
        const late = retainedAt(probes, 24);
        expect(late.every((f) => early.includes(f))).toBe(true);
      }
    });
  }

  it('keep 1 never loses a fact', () => {
    for (const spec of ['summary-buffer:keepRecent=2', 'summary:threshold=200', 'summary-buffer:keepRecent=1,batch=1,keep=1']) {
      for (const seed of [1, 42, 43]) expect(run(spec, seed).every((p) => p.endsWith(':retained'))).toBe(true);
    }
  });
});
