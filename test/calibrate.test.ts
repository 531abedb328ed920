import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { scenarioFromValue } from '../src/scenario/load.js';
import { calibrateTokenFactor, calibrationReport, tokenFactorLine, type LeftOut } from '../src/study/calibrate.js';
import { loadScenarios, policiesFromFlags } from '../src/study/study.js';
import type { Conversation, Message } from '../src/types.js';
import { itShared, sharedData } from './_shared.js';
import { cli, expectUsage } from './_io.js';
import { tempDir } from './_tmp.js';

/** A model counted with a stand-in (o200k_base, an estimate), as Claude Code's logs name it. */
const CLAUDE = 'claude-sonnet-4-5-20250929';
const PREFIX = 5000;
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Some text of a given length, different for each seed (file contents a tool read). */
function text(seed: number, lines: number): string {
  const words = ['parse', 'render', 'session', 'transcript', 'live_view', 'assign', 'socket', 'handle_event', '%{id: 42}', 'defp', '|>', 'Enum.map/2', '# TODO'];
  return Array.from({ length: lines }, (_, i) => `${i + 1}\t${words[(seed * 7 + i) % words.length]} ${words[(seed + i * 3) % words.length]}(${seed}, ${i * i})`).join('\n');
}

/** An agent session: a long request, then `rounds` rounds of one tool call each, then the reply; no usage yet. */
function sessionDoc(id: string, rounds: number, model = CLAUDE, seed = 1): Record<string, unknown> {
  return {
    id,
    model,
    unlogged_prefix: { tokens: PREFIX, from: 'billed' },
    turns: [
      {
        user: `Explore the repository and explain how transcripts render.\n${text(seed, 120)}`,
        tools: Array.from({ length: rounds }, (_, r) => ({
          assistant: `Reading file ${r + 1}.`,
          calls: [{ call: 'Read', args: { file_path: `/repo/lib/file_${seed}_${r}.ex` }, result: text(seed * 10 + r, 40 + 25 * r) }],
        })),
        assistant: 'The transcript is rendered by TranscriptRenderer.',
      },
    ],
  };
}

/**
 * ctxsim's count of each call of a session, worked out here apart from the
 * fit: the prompt (prefix left out), and its per-message constants by
 * OpenAI's rule (3 per message, 1 per name, 3 to prime the reply): what is
 * left is the tokens of texts.
 */
function callCounts(doc: Record<string, unknown>): { x: number; constants: number; texts: number }[] {
  const c = scenarioFromValue(`${String(doc.id)}.yaml`, doc);
  const ctx = replayContext({ seed: 0, model: c.model!, tokenizer: 'auto' });
  const out: { x: number; constants: number; texts: number }[] = [];
  replay(c, policiesFromFlags(['full'])[0]!, ctx, (_, call) => {
    const constants = 3 + sum(call.plan.messages.map((m: Message) => 3 + (m.name !== undefined ? 1 : 0)));
    const x = call.promptTokens - call.unloggedTokens;
    out.push({ x, constants, texts: x - constants });
  });
  return out;
}

/**
 * The session with each call's usage: the first as `--unlogged-prefix billed`
 * sized it (the prefix, then ctxsim's count at factor 1), every other the
 * prefix, the constants, and `ratios[i]` × the texts' tokens.
 */
function billedSession(doc: Record<string, unknown>, ratios: readonly number[]): { conversation: Conversation; billed: number[]; counts: ReturnType<typeof callCounts> } {
  const counts = callCounts(doc);
  expect(ratios).toHaveLength(counts.length);
  const billed = counts.map((k, i) => (i === 0 ? PREFIX + k.x : PREFIX + k.constants + Math.round(ratios[i]! * k.texts)));
  const turn = (doc.turns as Record<string, unknown>[])[0]!;
  const rounds = (turn.tools as Record<string, unknown>[]).map((r, i) => ({ ...r, usage: { input: billed[i]!, cached: 0, output: 10 } }));
  const withUsage = { ...doc, turns: [{ ...turn, tools: rounds, usage: { input: billed[rounds.length]!, cached: 0, output: 10 } }] };
  return { conversation: scenarioFromValue(`${String(doc.id)}.yaml`, withUsage), billed, counts };
}

/** The ratio-of-sums fit over calls, worked out here: Σ(billed − prefix − constants) ÷ Σ texts. */
const fitOf = (calls: readonly { billed: number; constants: number; texts: number }[]) => sum(calls.map((c) => c.billed - PREFIX - c.constants)) / sum(calls.map((c) => c.texts));

describe('calibrateTokenFactor', () => {
  it('recovers a known factor from a transcript billed at 1.2 × ctxsim’s text tokens plus a known prefix, leaving out the call that sized the prefix', () => {
    const { conversation, billed, counts } = billedSession(sessionDoc('s1', 4), [1, 1.2, 1.2, 1.2, 1.2]);
    const { models, skipped } = calibrateTokenFactor([conversation]);
    expect(skipped).toEqual([]);
    const [m] = models;
    expect(m).toMatchObject({ model: CLAUDE, tokenizer: 'o200k_base', estimate: true, transcripts: ['s1'], leaveOut: 'call', rounded: 1.2 });
    expect(Math.abs(m!.factor! - 1.2)).toBeLessThan(2e-4);
    // Its split of each count is the one worked out here.
    expect(m!.calls.map((c) => [c.billed, c.counted - c.unlogged, c.unlogged, c.counted - c.unlogged - c.scaled, c.fitted])).toEqual(
      counts.map((k, i) => [billed[i], k.x, PREFIX, k.constants, i > 0]),
    );
    // The first call (billed at factor 1: it sized the prefix) would pull the factor well below 1.2 if it were fitted.
    const all = fitOf(counts.map((k, i) => ({ ...k, billed: billed[i]! })));
    expect(1.2 - all).toBeGreaterThan(0.01);
    // Uncalibrated, over every billed call; calibrated, replayed with the factor: the first call's text is now counted × 1.2 too.
    expect(m!.counted).toBe(sum(counts.map((k) => PREFIX + k.x)));
    expect(m!.billed).toBe(sum(billed));
    expect(Math.abs(m!.calibrated! - m!.billed - 0.2 * counts[0]!.texts)).toBeLessThan(counts.length * 2);
    expect(tokenFactorLine({ models, skipped })).toBe(`tokenFactor: {${CLAUDE}: 1.200}`);
  });

  it('leaves one call out of one transcript: each fitted call predicted from the fit on the others, as worked out here', () => {
    const ratios = [1, 1.1, 1.3, 1.15, 1.22, 1.18];
    const { conversation, billed, counts } = billedSession(sessionDoc('s1', 5), ratios);
    const [m] = calibrateTokenFactor([conversation]).models;
    const calls = counts.map((k, i) => ({ ...k, billed: billed[i]!, call: i + 1 }));
    const fitted = calls.slice(1);
    expect(m!.factor).toBeCloseTo(fitOf(fitted), 12);
    const expected = fitted.map((c) => {
      const f = fitOf(fitted.filter((o) => o !== c));
      const predicted = PREFIX + c.constants + f * c.texts;
      return { scenario: 's1', call: c.call, factor: f, predicted, billed: c.billed, error: predicted / c.billed - 1, counted: PREFIX + c.x };
    });
    expect(m!.leaveOut).toBe('call');
    expect(m!.loo).toHaveLength(expected.length);
    m!.loo.forEach((l, i) => {
      expect(l).toMatchObject({ scenario: 's1', call: expected[i]!.call, billed: expected[i]!.billed, counted: expected[i]!.counted });
      expect(l.factor).toBeCloseTo(expected[i]!.factor, 12);
      expect(l.predicted).toBeCloseTo(expected[i]!.predicted, 6);
      expect(l.error).toBeCloseTo(expected[i]!.error, 12);
    });
    const worst = expected.reduce((w, e) => (Math.abs(e.error) > Math.abs(w.error) ? e : w));
    const meanAbs = sum(expected.map((e) => Math.abs(e.error))) / expected.length;
    const before = sum(expected.map((e) => Math.abs(e.counted / e.billed - 1))) / expected.length;
    expect(m!.error).toMatchObject({ outOfSample: false, worst: { call: worst.call } });
    expect(m!.error!.meanAbs).toBeCloseTo(meanAbs, 12);
    expect(m!.error!.uncalibrated).toBeCloseTo(before, 12);
    // One transcript: said plainly, and the calls' figure given as the optimistic bound it is.
    const report = calibrationReport(calibrateTokenFactor([conversation])).split('\n');
    expect(report.slice(3, 5)).toEqual([
      '  one transcript only: no error out of sample (give two or more transcripts of the model: each is then predicted from the fit on the others)',
      `  leave one call out: mean |error| ${(meanAbs * 100).toFixed(2)}%, worst ${worst.error < 0 ? '−' : '+'}${(Math.abs(worst.error) * 100).toFixed(2)}% (s1 call ${worst.call}) over ${expected.length} calls; uncalibrated, mean |error| ${(before * 100).toFixed(2)}%: an optimistic bound, its calls sharing most of their text (on real sessions it understates the error on another session 2–10×)`,
    ]);
    expect(report[5]).toMatch(/^ {2}calibrated in sample: ctxsim counts [\d,]+ with tokenFactor \d\.\d{3} \([+−]\d\.\d\d%\): the transcripts it was fitted on, close by construction$/);
  });

  it('leaves one transcript out when the model has two: each predicted, every billed call of it, from the fit on the other', () => {
    const a = billedSession(sessionDoc('a', 3, CLAUDE, 1), [1, 1.2, 1.2, 1.2]);
    const b = billedSession(sessionDoc('b', 4, CLAUDE, 2), [1, 1.3, 1.3, 1.3, 1.3]);
    const [m] = calibrateTokenFactor([a.conversation, b.conversation]).models;
    const calls = (s: typeof a) => s.counts.map((k, i) => ({ ...k, billed: s.billed[i]! }));
    expect(m!.factor).toBeCloseTo(fitOf([...calls(a).slice(1), ...calls(b).slice(1)]), 12);
    const predict = (s: typeof a, f: number): Partial<LeftOut> => {
      const predicted = sum(s.counts.map((k) => PREFIX + k.constants + f * k.texts));
      return { predicted, billed: sum(s.billed), error: predicted / sum(s.billed) - 1, counted: sum(s.counts.map((k) => PREFIX + k.x)) };
    };
    const fromB = fitOf(calls(b).slice(1));
    const fromA = fitOf(calls(a).slice(1));
    expect(m!.leaveOut).toBe('transcript');
    expect(m!.loo.map((l) => l.scenario)).toEqual(['a', 'b']);
    const [la, lb] = m!.loo;
    for (const [got, f, s] of [[la!, fromB, a], [lb!, fromA, b]] as const) {
      const want = predict(s, f);
      expect(got.call).toBeUndefined();
      expect(got.factor).toBeCloseTo(f, 12);
      expect(got.predicted).toBeCloseTo(want.predicted!, 6);
      expect(got.billed).toBe(want.billed);
      expect(got.counted).toBe(want.counted);
      expect(got.error).toBeCloseTo(want.error!, 12);
    }
    // Fitted on b (1.3), a is over-predicted; fitted on a (1.2), b under.
    expect(la!.error).toBeGreaterThan(0.02);
    expect(lb!.error).toBeLessThan(-0.02);
    // That is the fit's error, out of sample: the report's error line, before the count in sample (near 0 by construction).
    const worst = Math.abs(la!.error) > Math.abs(lb!.error) ? la! : lb!;
    const meanAbs = (Math.abs(la!.error) + Math.abs(lb!.error)) / 2;
    expect(m!.error).toMatchObject({ outOfSample: true, worst: { scenario: worst.scenario } });
    expect(m!.error!.meanAbs).toBeCloseTo(meanAbs, 12);
    const report = calibrationReport(calibrateTokenFactor([a.conversation, b.conversation])).split('\n');
    expect(report[3]).toBe(
      `  error (out of sample: each transcript predicted from the fit on the others): mean |error| ${(meanAbs * 100).toFixed(2)}%, worst +${(worst.error * 100).toFixed(2)}% (${worst.scenario}) over 2 transcripts; uncalibrated, mean |error| ${(m!.error!.uncalibrated * 100).toFixed(2)}%`,
    );
    expect(report[4]).toMatch(/^ {2}calibrated in sample: /);
    expect(report.join('\n')).not.toContain('leave one call out');
  });

  it('fits each model apart; a model with its own tokenizer gets no factor, and transcripts without per-call usage are skipped', () => {
    const claude = billedSession(sessionDoc('c', 3), [1, 1.2, 1.2, 1.2]);
    const gpt = billedSession(sessionDoc('g', 3, 'gpt-4o'), [1, 1.05, 1.05, 1.05]);
    const plain = scenarioFromValue('p.yaml', { id: 'p', turns: [{ user: 'hi', assistant: 'hello' }] });
    const total = scenarioFromValue('t.yaml', { id: 't', model: 'gpt-4o', billed: { calls: 1, input: 100 }, turns: [{ user: 'hi', assistant: 'hello' }] });
    const result = calibrateTokenFactor([plain, gpt.conversation, total, claude.conversation]);
    expect(result.skipped).toEqual([
      { scenario: 'p', reason: 'no billed usage' },
      { scenario: 't', reason: 'its bill is a total, not per call' },
    ]);
    expect(result.models.map((m) => [m.model, m.tokenizer, m.estimate, m.rounded])).toEqual([
      ['gpt-4o', 'o200k_base', false, 1.05],
      [CLAUDE, 'o200k_base', true, 1.2],
    ]);
    expect(result.models[0]!.calibrated).toBeUndefined();
    expect(tokenFactorLine(result)).toBe(`tokenFactor: {${CLAUDE}: 1.200}`);
    const report = calibrationReport(result);
    expect(report).toContain("no factor needed: o200k_base is gpt-4o’s own tokenizer");
    expect(report.trimEnd().split('\n').at(-1)).toBe(`tokenFactor: {${CLAUDE}: 1.200}`);
  });

  it('fits every transcript as the model given, and keys the line by it', () => {
    const { conversation } = billedSession(sessionDoc('s1', 3), [1, 1.2, 1.2, 1.2]);
    const result = calibrateTokenFactor([conversation], { model: 'claude-sonnet-4-5' });
    expect(tokenFactorLine(result)).toBe('tokenFactor: {claude-sonnet-4-5: 1.200}');
  });

  it('a transcript without a prefix is fitted from its first call', () => {
    const doc = { ...sessionDoc('s1', 2) };
    delete doc.unlogged_prefix;
    const counts = callCounts(doc);
    const turn = (doc.turns as Record<string, unknown>[])[0]!;
    const billed = counts.map((k) => k.constants + Math.round(1.25 * k.texts));
    const rounds = (turn.tools as Record<string, unknown>[]).map((r, i) => ({ ...r, usage: { input: billed[i]! } }));
    const c = scenarioFromValue('s1.yaml', { ...doc, turns: [{ ...turn, tools: rounds, usage: { input: billed[rounds.length]! } }] });
    const [m] = calibrateTokenFactor([c]).models;
    expect(m!.calls.every((k) => k.fitted && k.unlogged === 0)).toBe(true);
    expect(m!.rounded).toBe(1.25);
  });
});

describe('ctxsim calibrate', () => {
  function files(): string {
    const dir = tempDir('ctxsim-calibrate-');
    const docs = [billedSession(sessionDoc('a', 3, CLAUDE, 1), [1, 1.2, 1.2, 1.2]), billedSession(sessionDoc('b', 3, CLAUDE, 2), [1, 1.2, 1.2, 1.2])];
    for (const [i, d] of docs.entries()) writeFileSync(join(dir, `${'ab'[i]}.json`), JSON.stringify(toDoc(d.conversation)));
    writeFileSync(join(dir, 'plain.yaml'), 'id: plain\nturns:\n  - user: hi\n    assistant: hello\n');
    return dir;
  }

  it('prints the fit of each model and ends with the study line, which parses as YAML; skipped transcripts on stderr', async () => {
    const dir = files();
    const { code, out, err } = await cli('calibrate', join(dir, '*.json'), join(dir, 'plain.yaml'));
    expect(code).toBe(0);
    expect(err).toBe('calibrate: skipped plain (no billed usage)\n');
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe(`${CLAUDE} · o200k_base (estimate) · 2 transcripts, 8 billed calls, 6 fitted`);
    expect(lines[1]).toBe('  factor 1.200: billed ÷ counted over the fitted calls’ logged text');
    expect(out).toMatch(/\n {2}error \(out of sample: each transcript predicted from the fit on the others\): mean \|error\| \d\.\d\d%, worst [+−]\d\.\d\d% \([ab]\) over 2 transcripts; uncalibrated, mean \|error\| \d+\.\d\d%\n/);
    expect(parse(lines.at(-1)!)).toEqual({ tokenFactor: { [CLAUDE]: 1.2 } });
    // The same files, the same output.
    expect((await cli('calibrate', join(dir, '*.json'), join(dir, 'plain.yaml'))).out).toBe(out);
  });

  it('errors are one line, exit 2', async () => {
    const dir = files();
    await expectUsage(['calibrate', join(dir, 'plain.yaml')], 'ctxsim: calibrate: no transcript records billed usage per call (1 scenario read): import agent transcripts that do (claude-code, swe-agent, openai, anthropic)');
    await expectUsage(['calibrate', join(dir, '*.json'), '--model', 'claude-sonet-4-5'], /^ctxsim: --model: unknown model "claude-sonet-4-5" \(closest: claude-sonnet-4-5/);
    writeFileSync(join(dir, 'odd.yaml'), JSON.stringify({ ...toDoc(billedSession(sessionDoc('odd', 1), [1, 1.2]).conversation), model: 'claude-sonet-9' }));
    await expectUsage(['calibrate', join(dir, 'odd.yaml')], /^ctxsim: .*odd\.yaml: model: unknown model "claude-sonet-9" \(closest: .*\); give one the price table knows with --model$/);
    writeFileSync(join(dir, 'anon.yaml'), JSON.stringify({ ...toDoc(billedSession(sessionDoc('anon', 1), [1, 1.2]).conversation), model: undefined }));
    await expectUsage(['calibrate', join(dir, 'anon.yaml')], /^ctxsim: .*anon\.yaml: names no model \(model:\): give the model it ran on with --model$/);
    writeFileSync(join(dir, 'bad.yaml'), 'id: bad\nturns: 3\n');
    await expectUsage(['calibrate', join(dir, 'bad.yaml')], /^ctxsim: .*bad\.yaml.*turns/);
    await expectUsage(['calibrate', join(dir, 'none-*.yaml')], `ctxsim: ${join(dir, 'none-*.yaml')}: no scenario file matches`);
    writeFileSync(join(dir, 'session.jsonl'), '{}\n');
    await expectUsage(['calibrate', join(dir, 'session.jsonl')], /^ctxsim: .*session\.jsonl: a transcript log, not a scenario file: import it first \(ctxsim import --format FORMAT .*session\.jsonl --out DIR --unlogged-prefix billed\)$/);
  });
});

/** A conversation back as a scenario document (rounds of one call each, the reply), for writing to a file. */
function toDoc(c: Conversation): Record<string, unknown> {
  const t = c.turns[0]!;
  const rounds: Record<string, unknown>[] = [];
  for (const m of t.tools) {
    if (m.role === 'assistant') rounds.push({ assistant: m.content, calls: m.toolCalls!.map((k) => ({ call: k.name, args: JSON.parse(k.arguments) as unknown })), usage: m.billed });
    else (rounds.at(-1)!.calls as Record<string, unknown>[])[0]!.result = m.content;
  }
  return { id: c.id, model: c.model, unlogged_prefix: { tokens: c.unloggedTokens, from: 'billed' }, turns: [{ user: t.user.content, tools: rounds, assistant: t.assistant!.content, usage: t.assistant!.billed }] };
}

const SAMPLE = 'agent_transcripts_sample/claude-code_sonnet-4-5_subagent-a2898e3.jsonl';

itShared(SAMPLE, 'the real Claude Code sample, imported with --unlogged-prefix billed: o200k_base counts its logged text about 13% short, and the fitted factor closes the gap', async (path) => {
  const dir = tempDir('ctxsim-calibrate-');
  const imported = await cli('import', '--format', 'claude-code', path, '--out', dir, '--unlogged-prefix', 'billed');
  expect(imported.code, imported.err).toBe(0);
  const { code, out, err } = await cli('calibrate', join(dir, '*.yaml'));
  expect(code, err).toBe(0);
  expect(err).toBe('');
  const lines = out.trimEnd().split('\n');
  expect(lines[0]).toBe(`${CLAUDE} · o200k_base (estimate) · 1 transcript, 12 billed calls, 11 fitted`);
  const factor = Number(/^ {2}factor (\d\.\d{3}):/.exec(lines[1]!)?.[1]);
  expect(factor).toBeGreaterThan(1.05);
  expect(factor).toBeLessThan(1.3);
  expect(parse(lines.at(-1)!)).toEqual({ tokenFactor: { [CLAUDE]: factor } });
  // Uncalibrated (the prefix in every call), the bill of 675,466 prompt tokens is undercounted; calibrated, within half a percent.
  const pct = (label: string) => Number(new RegExp(`\\n {2}${label}:.*\\(([+−]\\d+\\.\\d\\d)%\\)`).exec(out)![1]!.replace('−', '-'));
  expect(out).toContain('the provider billed 675,466');
  expect(pct('uncalibrated')).toBeLessThan(-5);
  expect(Math.abs(pct('calibrated in sample'))).toBeLessThan(0.5);
  // One transcript: no error out of sample, said plainly; leaving calls out is the optimistic bound.
  expect(lines[3]).toBe('  one transcript only: no error out of sample (give two or more transcripts of the model: each is then predicted from the fit on the others)');
  const loo = /\n {2}leave one call out: mean \|error\| (\d\.\d\d)%, worst [+−]\d\.\d\d% \(claude-code-sonnet-4-5-subagent-a2898e3 call \d+\) over 11 calls; uncalibrated, mean \|error\| (\d+\.\d\d)%: an optimistic bound/.exec(out);
  expect(loo, out).not.toBeNull();
  // Each call predicted from the fit on the others is off by a fraction of what the stand-in alone was.
  expect(Number(loo![1])).toBeLessThan(Number(loo![2]) / 3);
});

const MINI = 'agent_transcripts_sample/mini-swe-agent_deepseek-chat_django-15213.traj.json';

itShared(MINI, 'two real sessions (the Claude Code sub-agent and the mini-swe-agent run) fitted as one stand-in model: each transcript left out in turn, and that error out of sample is several times what leaving calls out of either alone says', async (mini) => {
  const claude = sharedData(SAMPLE);
  if (!claude) return;
  const dir = tempDir('ctxsim-calibrate-two-');
  for (const [format, path] of [['claude-code', claude], ['swe-agent', mini]] as const) {
    const r = await cli('import', '--format', format, path, '--out', dir, '--unlogged-prefix', 'billed');
    expect(r.code, r.err).toBe(0);
  }
  const loaded = loadScenarios([{ kind: 'glob', pattern: join(dir, '*.yaml'), base: dir }]);
  expect(loaded.map((c) => c.id).sort()).toEqual(['claude-code-sonnet-4-5-subagent-a2898e3', 'mini-swe-agent-deepseek-chat-django-15213']);
  const [both] = calibrateTokenFactor(loaded, { model: CLAUDE }).models;
  expect(both!.leaveOut).toBe('transcript');
  expect(both!.loo.map((l) => l.call)).toEqual([undefined, undefined]);
  expect(both!.error!.outOfSample).toBe(true);
  // Each alone: its calls left out in turn, the optimistic bound.
  const alone = loaded.map((c) => calibrateTokenFactor([c], { model: CLAUDE }).models[0]!.error!);
  expect(alone.map((e) => e.outOfSample)).toEqual([false, false]);
  // Out of sample 4.33%; leaving calls out says 0.85% (Claude Code) and 2.44% (mini-swe-agent, whose first call, counted
  // without the tools block its own model's format needs no stand-in for, is off by 13.5%): 5.1× and 1.8× less.
  for (const e of alone) expect(both!.error!.meanAbs).toBeGreaterThan(1.5 * e.meanAbs);
  const report = calibrationReport(calibrateTokenFactor(loaded, { model: CLAUDE }));
  expect(report).toMatch(/\n {2}error \(out of sample: each transcript predicted from the fit on the others\): mean \|error\| \d+\.\d\d%, worst [+−]\d+\.\d\d% \((claude-code|mini-swe-agent)\S+\) over 2 transcripts; uncalibrated, mean \|error\| \d+\.\d\d%\n/);
});
