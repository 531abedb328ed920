import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import type { ProbeRecord, TurnRecord } from '../src/records/registry.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

/**
 * `ctxsim explain STUDY` replays a turn as `ctxsim run STUDY` did: the
 * study's model, seed (its generated conversations), caching (a 10-minute
 * TTL: Claude's 1-hour writes), tool definitions and the policy's upkeep
 * model; each call's tokens and cost add up to the turn's record.
 */

const POLICY = 'summary:threshold=1200,summaryModel=gpt-4.1-mini';

const STUDY = `seed: 7
model: claude-sonnet-4-5
cacheTtl: 10m
toolDefs:
  - {name: lookup_order, description: Find an order by its id, parameters: {type: object, properties: {id: {type: string}}}}
scenarios:
  - generate: {profile: support, count: 2}
  - generate: {profile: companion, count: 1, turns: 20-30}
  - generate: {profile: agent, count: 1, turns: 2-3, steps: 3-6, observationTokens: 200}
policies:
  - ${POLICY}
`;

/** Pico-dollars per token, from the builtin table: claude-sonnet-4-5 ($3/M in, $0.30/M cache reads, $6/M 1-hour writes, $15/M out), gpt-4.1-mini ($0.40/M in, $1.60/M out). */
const SONNET = { input: 3_000_000n, read: 300_000n, write1h: 6_000_000n, output: 15_000_000n };
const MINI = { input: 400_000n, output: 1_600_000n };

/** USD as written (up to 12 decimals) in pico-dollars. */
function pico(usd: string): bigint {
  const [whole, fraction = ''] = usd.split('.');
  return BigInt(whole!) * 10n ** 12n + BigInt(fraction.padEnd(12, '0'));
}

/** A turn record as results.json writes it: money as decimal strings. */
type TurnJson = { [K in keyof TurnRecord]: TurnRecord[K] extends bigint ? string : TurnRecord[K] };

async function explainOut(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capture();
  const code = await runMain(['explain', ...args], io);
  return { code, out: io.stdout, err: io.stderr };
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const sumPico = (xs: readonly bigint[]): bigint => xs.reduce((a, b) => a + b, 0n);

describe('explain a study', () => {
  it('shows each call as the run priced it: the tokens and cost of its turn in turns.csv and results.json, its probes as probes.csv scored them', async () => {
    const dir = tempDir();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, STUDY);
    expect(await runMain(['run', study, '--out', join(dir, 'out'), '--no-token-cache', '--quiet'], capture())).toBe(0);
    const results = JSON.parse(readFileSync(join(dir, 'out', 'results.json'), 'utf8')) as { turns: TurnJson[]; probes: ProbeRecord[] };
    const [header, ...rows] = readFileSync(join(dir, 'out', 'turns.csv'), 'utf8').trim().split('\n');
    const costColumn = header!.split(',').indexOf('cost_usd');
    const csvCost = (t: TurnJson) => rows.find((r) => r.startsWith(`${t.scenario},"${POLICY}",${t.turn},`))!.replace(`"${POLICY}"`, 'policy').split(',')[costColumn];

    // One turn of each kind: upkeep charged, cache written, cache read, several calls, and each probe outcome seen.
    const find = (f: (t: TurnJson) => boolean) => results.turns.find(f)!;
    const probeTurns = [...new Set(results.probes.map((p) => p.outcome))].map((o) => results.probes.find((p) => p.outcome === o)!);
    const picked = [
      find((t) => t.auxInputTokens > 0),
      find((t) => t.cacheWriteTokens > 0),
      find((t) => t.cachedTokens > 0),
      find((t) => t.calls > 1),
      ...probeTurns.map((p) => find((t) => t.scenario === p.scenario && t.turn === p.turn)),
    ];
    expect(picked.every(Boolean)).toBe(true);
    expect(probeTurns.map((p) => p.outcome).sort()).toEqual(['missing', 'retained']);

    for (const t of new Set(picked)) {
      const { code, out, err } = await explainOut([study, '--scenario', t.scenario, '--policy', POLICY, '--turn', String(t.turn)]);
      expect([code, err]).toEqual([0, '']);
      expect(out.split('\n')[0]).toBe(`${t.scenario} · ${POLICY} · turn ${t.turn} · claude-sonnet-4-5 · o200k_base (estimate)`);
      const totals = [...out.matchAll(/^\s+total\s+(\d+)/gm)].map((m) => Number(m[1]));
      const calls = [...out.matchAll(/^ {2}cost on claude-sonnet-4-5: (\d+) uncached, (\d+) cache reads, (\d+) cache writes, (\d+) output tokens: \$([\d.]+)$/gm)].map((m) => ({
        uncached: Number(m[1]),
        read: Number(m[2]),
        written: Number(m[3]),
        output: Number(m[4]),
        cost: pico(m[5]!),
      }));
      const upkeep = [...out.matchAll(/^ {2}upkeep (?:before this call|after the calls): summary on gpt-4\.1-mini, (\d+) in, (\d+) out: \$([\d.]+)$/gm)].map((m) => ({ input: Number(m[1]), output: Number(m[2]), cost: pico(m[3]!) }));
      // Each call's prompt, as the table counts it, is what was priced; each is priced at the study's model's rates by hand.
      expect(calls).toHaveLength(t.calls);
      expect(calls.map((c) => c.uncached + c.read + c.written)).toEqual(totals);
      for (const c of calls) expect(c.cost).toBe(BigInt(c.uncached) * SONNET.input + BigInt(c.read) * SONNET.read + BigInt(c.written) * SONNET.write1h + BigInt(c.output) * SONNET.output);
      for (const u of upkeep) expect(u.cost).toBe(BigInt(u.input) * MINI.input + BigInt(u.output) * MINI.output);
      // The calls add up to the turn's record, and with its upkeep to its cost.
      expect(sum(totals)).toBe(t.inputTokens);
      expect(sum(calls.map((c) => c.read))).toBe(t.cachedTokens);
      expect(sum(calls.map((c) => c.written))).toBe(t.cacheWriteTokens);
      expect(sum(calls.map((c) => c.output))).toBe(t.outputTokens);
      expect(sumPico(calls.map((c) => c.cost))).toBe(pico(t.costInput) + pico(t.costCached) + pico(t.costOutput));
      expect([sum(upkeep.map((u) => u.input)), sum(upkeep.map((u) => u.output)), sumPico(upkeep.map((u) => u.cost))]).toEqual([t.auxInputTokens, t.auxOutputTokens, pico(t.costUpkeep)]);
      const turnCost = /^turn \d+ cost: \$([\d.]+)/m.exec(out)![1]!;
      expect(turnCost).toBe(csvCost(t));
      expect(pico(turnCost)).toBe(sumPico(calls.map((c) => c.cost)) + sumPico(upkeep.map((u) => u.cost)));
      // The probes, as the run scored them on the first call.
      const probes = results.probes.filter((p) => p.scenario === t.scenario && p.turn === t.turn);
      expect([...out.matchAll(/^probe (\S+): (\w+) \(/gm)].map((m) => `${m[1]} ${m[2]}`)).toEqual(probes.map((p) => `${p.fact} ${p.outcome}`));
      for (const p of probes) {
        if (p.outcome === 'retained') expect(out).toMatch(new RegExp(`^probe ${p.fact}: retained \\(value ".+" in call 1's prompt, from the ${p.source}\\)$`, 'm'));
        if (p.outcome === 'missing') expect(out).toContain(`probe ${p.fact}: missing (no value of it in call 1's prompt)\n`);
      }
    }
  }, 60_000);

  it('a study of one scenario file explains it as the file with the same settings does; --scenario, --model pick among the study’s', async () => {
    const dir = tempDir();
    const noah = fileURLToPath(new URL('../scenarios/noah-amnesia.yaml', import.meta.url));
    writeFileSync(join(dir, 'study.yaml'), `model: gpt-4.1-mini\nseed: 3\nscenarios: [${JSON.stringify(noah)}]\npolicies: [full]\n`);
    const args = ['--policy', 'window-turns:turns=3', '--turn', '5'];
    const fromStudy = await explainOut([join(dir, 'study.yaml'), ...args]);
    const fromFile = await explainOut([noah, ...args, '--model', 'gpt-4.1-mini', '--seed', '3']);
    expect(fromStudy).toEqual({ code: 0, out: fromFile.out, err: '' });
    expect(fromStudy.out).toContain('\nprobe name: missing (no value of it in call 1\'s prompt)\n');
    expect((await explainOut([join(dir, 'study.yaml'), '--policy', 'full', '--turn', '5'])).out).toContain('\nprobe name: retained (value "Noah" in call 1\'s prompt, from the window)\n');
    expect(await explainOut([join(dir, 'study.yaml'), ...args, '--scenario', 'noah-amnesia', '--model', 'gpt-4.1-mini'])).toEqual(fromStudy);
    expect(await explainOut([join(dir, 'study.yaml'), ...args, '--scenario', 'noah'])).toEqual({
      code: 2,
      out: '',
      err: 'ctxsim: --scenario noah: the study has no scenario of that id (closest: noah-amnesia)\n',
    });
    expect(await explainOut([join(dir, 'study.yaml'), ...args, '--model', 'gpt-4o-mini'])).toEqual({ code: 2, out: '', err: 'ctxsim: --model gpt-4o-mini: not a model of the study (gpt-4.1-mini)\n' });
    const other = await explainOut([noah, ...args, '--scenario', 'other']);
    expect(other.code).toBe(2);
    expect(other.err).toMatch(/^ctxsim: --scenario other: \S*noah-amnesia\.yaml is a scenario file, of scenario noah-amnesia\n$/);
  });

  it('a study of several scenarios needs --scenario', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'scenarios:\n  - generate: {profile: support, count: 7}\npolicies: [full]\n');
    expect(await explainOut([join(dir, 'study.yaml'), '--policy', 'full', '--turn', '1'])).toEqual({
      code: 2,
      out: '',
      err: 'ctxsim: --scenario: the study has 7 scenarios, name one: support-0001, support-0002, support-0003, support-0004, support-0005, … (7 in all)\n',
    });
  });
});
