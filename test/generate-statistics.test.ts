import { describe, expect, it } from 'vitest';
import { normalizeText } from '../src/scenario/docs.js';
import { generateConversations } from '../src/scenario/generate/index.js';
import { wordCount } from '../src/scenario/generate/text.js';
import type { Conversation } from '../src/types.js';

/**
 * Each profile's statistics over 200 conversations (seed 42) fall in the
 * ranges docs/sources.md states (Generating conversations). Quantiles: the value at index
 * floor(p·n) of the sorted list.
 */
const N = 200;

function quantile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

interface Stats {
  turns: number[];
  userMedian: number;
  userP95: number;
  assistantMedian: number;
  assistantP95: number;
}

function stats(cs: readonly Conversation[]): Stats {
  const user = cs.flatMap((c) => c.turns.map((t) => wordCount(t.user.content)));
  const assistant = cs.flatMap((c) => c.turns.flatMap((t) => (t.assistant ? [wordCount(t.assistant.content)] : [])));
  return {
    turns: cs.map((c) => c.turns.length),
    userMedian: quantile(user, 0.5),
    userP95: quantile(user, 0.95),
    assistantMedian: quantile(assistant, 0.5),
    assistantP95: quantile(assistant, 0.95),
  };
}

/** Stated turn of each (fact, value), in order. */
function statements(c: Conversation): { fact: string; value: string; turn: number }[] {
  return c.turns.flatMap((t) => Object.entries(t.facts).map(([fact, value]) => ({ fact, value, turn: t.index })));
}

const ranges = {
  support: { turns: [5, 40], userMedian: [14, 26], userP95: [35, 70], assistantMedian: [28, 48], assistantP95: [65, 120] },
  'voice-assistant': { turns: [3, 15], userMedian: [8, 16], userP95: [15, 35], assistantMedian: [10, 22], assistantP95: [20, 45] },
  coding: { turns: [10, 60], userMedian: [35, 65], userP95: [100, 220], assistantMedian: [80, 150], assistantP95: [200, 400] },
  companion: { turns: [50, 300], userMedian: [20, 35], userP95: [45, 90], assistantMedian: [25, 45], assistantP95: [60, 120] },
} as const;

const generated = new Map(Object.keys(ranges).map((p) => [p, generateConversations({ profile: p, count: N, seed: 42 })]));

describe.each(Object.entries(ranges))('%s over 200 conversations', (profile, r) => {
  const cs = generated.get(profile)!;
  const s = stats(cs);

  it('turn counts stay in range and reach both ends (within 2)', () => {
    expect(Math.min(...s.turns)).toBeGreaterThanOrEqual(r.turns[0]);
    expect(Math.max(...s.turns)).toBeLessThanOrEqual(r.turns[1]);
    expect(Math.min(...s.turns)).toBeLessThanOrEqual(r.turns[0] + 2);
    expect(Math.max(...s.turns)).toBeGreaterThanOrEqual(r.turns[1] - 2);
  });

  it('message lengths are long-tailed: median and p95 in range, p95 ≥ 1.8 × median', () => {
    expect(s.userMedian).toBeGreaterThanOrEqual(r.userMedian[0]);
    expect(s.userMedian).toBeLessThanOrEqual(r.userMedian[1]);
    expect(s.userP95).toBeGreaterThanOrEqual(r.userP95[0]);
    expect(s.userP95).toBeLessThanOrEqual(r.userP95[1]);
    expect(s.assistantMedian).toBeGreaterThanOrEqual(r.assistantMedian[0]);
    expect(s.assistantMedian).toBeLessThanOrEqual(r.assistantMedian[1]);
    expect(s.assistantP95).toBeGreaterThanOrEqual(r.assistantP95[0]);
    expect(s.assistantP95).toBeLessThanOrEqual(r.assistantP95[1]);
    expect(s.userP95).toBeGreaterThanOrEqual(1.8 * s.userMedian);
    expect(s.assistantP95).toBeGreaterThanOrEqual(1.8 * s.assistantMedian);
  });

  it('every fact value is in the user text of the turn that states it, and nowhere before', () => {
    for (const c of cs) {
      const texts = c.turns.map((t) =>
        normalizeText([t.user.content, ...t.tools.map((m) => `${m.content} ${JSON.stringify(m.toolCalls ?? [])}`), t.assistant?.content ?? ''].join(' ')),
      );
      for (const { value, turn } of statements(c)) {
        const v = normalizeText(value);
        expect(normalizeText(c.turns[turn - 1]!.user.content)).toContain(v);
        for (let j = 0; j < turn - 1; j++) expect(texts[j]!.includes(v), `${c.id}: "${value}" already in turn ${j + 1}`).toBe(false);
      }
    }
  });

  it('every conversation probes, always a fact stated in an earlier turn, without saying its value', () => {
    for (const c of cs) {
      const probes = c.turns.flatMap((t) => t.probe.map((f) => ({ f, turn: t.index })));
      expect(probes.length, c.id).toBeGreaterThan(0);
      for (const p of probes) {
        const earlier = statements(c).filter((st) => st.fact === p.f && st.turn < p.turn);
        expect(earlier.length, `${c.id} ${p.f}@${p.turn}`).toBeGreaterThan(0);
        const current = normalizeText(earlier.at(-1)!.value);
        expect(normalizeText(c.turns[p.turn - 1]!.user.content).includes(current), `${c.id} ${p.f}@${p.turn}`).toBe(false);
      }
    }
  });
});

describe('profile events', () => {
  it('support: about a quarter of conversations correct email or phone, and the corrected value is probed afterwards', () => {
    let corrected = 0;
    for (const c of generated.get('support')!) {
      const st = statements(c);
      const fix = st.find((s, i) => st.slice(0, i).some((o) => o.fact === s.fact && o.value !== s.value));
      // Probes are late: from 60% of the turns on.
      for (const t of c.turns) if (t.probe.length) expect(t.index).toBeGreaterThanOrEqual(Math.ceil(0.6 * c.turns.length));
      if (!fix) continue;
      corrected++;
      expect(['email', 'phone']).toContain(fix.fact);
      expect(c.turns.some((t) => t.index > fix.turn && t.probe.includes(fix.fact))).toBe(true);
    }
    // correctionShare 0.25 over 200 draws: 50 expected, sd √(200·0.25·0.75) ≈ 6.1; the seed-42 draw gives 53.
    expect(corrected).toBe(53);
  });

  it('voice-assistant: tool calls are the four task/memo/calendar calls, and back-references follow creations', () => {
    const names = new Set<string>();
    for (const c of generated.get('voice-assistant')!) {
      for (const t of c.turns) for (const m of t.tools) for (const call of m.toolCalls ?? []) names.add(call.name);
      expect(c.turns[0]!.tools.length).toBeGreaterThan(0);
    }
    expect([...names].sort()).toEqual(['create_calendar_event', 'create_memo', 'create_task', 'update_task']);
  });

  it('coding: name, language and framework by turn 3; most replies carry a code block', () => {
    let replies = 0;
    let withCode = 0;
    for (const c of generated.get('coding')!) {
      const early = c.turns.slice(0, 3).flatMap((t) => Object.keys(t.facts));
      expect(early.sort()).toEqual(['framework', 'language', 'name']);
      for (const t of c.turns) {
        replies++;
        if (t.assistant!.content.includes('```')) withCode++;
      }
    }
    expect(withCode / replies).toBeGreaterThanOrEqual(0.6);
    expect(withCode / replies).toBeLessThanOrEqual(0.8);
  });

  it('companion: sessions days apart, preferences stated once and asked at least 14 days later', () => {
    for (const c of generated.get('companion')!) {
      const clock: number[] = [];
      c.turns.forEach((t, i) => clock.push(i ? clock[i - 1]! + t.gapSeconds : 0));
      expect(c.turns.filter((t) => t.gapSeconds >= 86400).length).toBeGreaterThanOrEqual(3);
      const st = statements(c);
      expect(new Set(st.map((s) => s.fact)).size).toBe(st.length);
      for (const t of c.turns) {
        for (const f of t.probe) {
          const at = st.find((s) => s.fact === f)!.turn;
          expect(clock[t.index - 1]! - clock[at - 1]!).toBeGreaterThanOrEqual(14 * 86400);
        }
      }
    }
  });
});
