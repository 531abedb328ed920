import { describe, expect, it } from 'vitest';
import { normalizeText, validateDocs, type RoundOut, type ScenarioOut } from '../src/scenario/docs.js';
import { AGENT_TOOL_DEFS } from '../src/scenario/generate/agent.js';
import { generateConversations, generateDocs, PROFILES } from '../src/scenario/generate/index.js';
import { scenariosToYamlStream } from '../src/scenario/yaml.js';
import { messageText, TokenCounter } from '../src/tokens/counter.js';
import type { Conversation } from '../src/types.js';
import { study } from './_pricing.js';

/**
 * The agent profile (docs/sources.md, Generating conversations): a task, then
 * an agent's loop of tool-call rounds whose results have long-tailed lengths
 * (median 1,500 o200k tokens, p95 about 9,000, capped at about 32,000);
 * facts first seen inside a tool result and asked for by a later turn.
 */

function quantile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

/** A session's rounds, all turns together. */
function rounds(doc: ScenarioOut): RoundOut[] {
  return doc.turns.flatMap((t) => ('user' in t ? ((t.tools ?? []) as RoundOut[]) : []));
}

/** Short sessions with short results: the structure, without the bulk. */
const SMALL = { steps: [4, 40] as const, observationTokens: 120 };

describe('agent profile', () => {
  it('is registered, with its documented defaults', () => {
    const p = PROFILES.get('agent')!;
    expect(p.defaults).toMatchObject({ turns: [2, 4], steps: [20, 200], observationTokens: 1500, observationSpread: 1.09, observationCap: 32000 });
    expect(p.overrides.safeParse({ steps: '3-8', observationTokens: 200 }).data).toEqual({ steps: [3, 8], observationTokens: 200 });
    expect(p.overrides.safeParse({ steps: '8-3' }).success).toBe(false);
  });

  it('is deterministic: the same seed gives byte-identical YAML, another seed differs', () => {
    const gen = (seed: number) => scenariosToYamlStream(generateDocs({ profile: 'agent', count: 3, seed, params: { steps: [20, 40] } }));
    const a = gen(7);
    expect(gen(7)).toBe(a);
    expect(gen(8)).not.toBe(a);
  });

  it('has its steps (rounds of all its loops) in range, with one or two calls each and text beside some', () => {
    const docs = generateDocs({ profile: 'agent', count: 30, seed: 42 });
    const steps = docs.map((d) => rounds(d).length);
    expect(Math.min(...steps)).toBeGreaterThanOrEqual(20);
    expect(Math.max(...steps)).toBeLessThanOrEqual(200);
    const all = docs.flatMap(rounds);
    const pairs = all.filter((r) => r.calls.length === 2).length / all.length;
    const texts = all.filter((r) => r.assistant).length / all.length;
    expect(all.every((r) => r.calls.length === 1 || r.calls.length === 2)).toBe(true);
    expect(pairs).toBeGreaterThan(0.1);
    expect(pairs).toBeLessThan(0.2);
    expect(texts).toBeGreaterThan(0.25);
    expect(texts).toBeLessThan(0.35);
    // A small range is met exactly, both ends reached; the first turn holds the longest loop.
    const small = generateDocs({ profile: 'agent', count: 100, seed: 3, params: { steps: [3, 6], observationTokens: 50 } });
    const n = small.map((d) => rounds(d).length);
    expect([Math.min(...n), Math.max(...n)]).toEqual([3, 6]);
    for (const d of small) {
      const loops = d.turns.map((t) => ('user' in t ? (t.tools ?? []).length : 0));
      expect(loops[0]).toBe(Math.max(...loops));
    }
  });

  it('declares the five tools, and every call names one of them', () => {
    expect(AGENT_TOOL_DEFS.map((t) => t.name)).toEqual(['read_file', 'search', 'run_tests', 'edit_file', 'list_dir']);
    for (const t of AGENT_TOOL_DEFS) {
      expect(t.description!.length).toBeGreaterThan(40);
      expect(t.parameters).toMatchObject({ type: 'object' });
    }
    const used = new Set<string>();
    for (const d of generateDocs({ profile: 'agent', count: 40, seed: 42, params: SMALL })) {
      expect(d.tool_defs).toEqual(AGENT_TOOL_DEFS);
      for (const r of rounds(d)) for (const c of r.calls) used.add(c.call);
    }
    expect([...used].sort()).toEqual(['edit_file', 'list_dir', 'read_file', 'run_tests', 'search']);
    const [c] = generateConversations({ profile: 'agent', count: 1, seed: 1, params: SMALL });
    expect(c!.toolDefs?.map((t) => t.name)).toEqual(AGENT_TOOL_DEFS.map((t) => t.name));
  });

  it('states every fact first inside a tool result of its turn, and a later turn probes each without saying it', () => {
    const cs = generateConversations({ profile: 'agent', count: 150, seed: 42, params: { ...SMALL, turns: [2, 4] } });
    let facts = 0;
    for (const c of cs) {
      // Every message in order, as the scorer reads it.
      const msgs = c.turns.flatMap((t) => [t.user, ...t.tools, ...(t.assistant ? [t.assistant] : [])]);
      const texts = msgs.map((m) => normalizeText(messageText(m)));
      const probed = new Set(c.turns.flatMap((t) => t.probe));
      for (const t of c.turns) {
        for (const [fact, value] of Object.entries(t.facts)) {
          facts++;
          const v = normalizeText(value);
          const first = texts.findIndex((x) => x.includes(v));
          expect(msgs[first]!.role, `${c.id} ${fact}`).toBe('tool');
          expect(msgs[first]!.turn, `${c.id} ${fact}`).toBe(t.index);
          expect(probed.has(fact), `${c.id} ${fact} is probed`).toBe(true);
        }
        for (const f of t.probe) {
          const at = c.turns.find((u) => f in u.facts)!;
          expect(at.index, `${c.id} ${f}`).toBeLessThan(t.index);
          expect(normalizeText(t.user.content)).not.toContain(normalizeText(at.facts[f]!));
          // The scripted reply says it.
          expect(normalizeText(t.assistant!.content)).toContain(normalizeText(at.facts[f]!));
        }
      }
      // A long enough first loop plants all four.
      if (c.turns[0]!.tools.filter((m) => m.role === 'assistant').length >= 3) expect(Object.keys(c.turns[0]!.facts).sort()).toEqual(['bug_file', 'error_id', 'failing_test', 'issue_id']);
    }
    expect(facts).toBeGreaterThan(500);
  });

  it('draws tool-result lengths from a long-tailed distribution: median ~1,500 and p95 ~9,000 o200k tokens, capped', () => {
    const counter = new TokenCounter('o200k_base');
    const lengths = generateDocs({ profile: 'agent', count: 50, seed: 42, params: { steps: [16, 24] } }).flatMap((d) =>
      rounds(d).flatMap((r) => r.calls.map((c) => counter.text(c.result as string))),
    );
    expect(lengths.length).toBeGreaterThan(1000);
    const median = quantile(lengths, 0.5);
    const p95 = quantile(lengths, 0.95);
    expect(median).toBeGreaterThanOrEqual(1300);
    expect(median).toBeLessThanOrEqual(1700);
    expect(p95).toBeGreaterThanOrEqual(7500);
    expect(p95).toBeLessThanOrEqual(10800);
    expect(Math.max(...lengths)).toBeGreaterThan(20000);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(32000 * 1.2);
  });

  it('loads and replays under full and window-tokens, each turn making one call more than it has rounds', () => {
    const docs = generateDocs({ profile: 'agent', count: 4, seed: 5, params: { steps: [6, 12], observationTokens: 200 } });
    const cs: Conversation[] = validateDocs(docs, (d) => d.id);
    const r = study(cs, ['full', 'window-tokens'], { model: 'gpt-4o-mini' });
    expect(new Set(r.turns.map((t) => t.policy)).size).toBe(2);
    for (const t of r.turns) {
      const turn = docs.find((d) => d.id === t.scenario)!.turns[t.turn - 1]!;
      expect(t.calls).toBe(('user' in turn ? (turn.tools ?? []).length : 0) + 1);
    }
    expect(r.turns.length).toBe(2 * cs.reduce((n, c) => n + c.turns.length, 0));
    const full = r.probes.filter((p) => p.policy === 'full');
    expect(full.length).toBeGreaterThan(0);
    expect(full.every((p) => p.outcome === 'retained')).toBe(true);
  });
});
