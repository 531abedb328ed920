import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CtxsimError } from '../src/errors.js';
import { checkPolicyContract } from '../src/policies/contract/checker.js';
import { CONTRACT_RULES, formatContractViolation } from '../src/policies/contract/rules.js';
import { contractScenarios, loadScenarios } from '../src/study/study.js';
import type { Policy } from '../src/policies/types.js';
import type { Conversation, Message } from '../src/types.js';
import { cli } from './_io.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * `ctxsim check-policy`: the policy contract from the command line. A policy
 * that keeps every rule passes (exit 0, one line); one that breaks some gets
 * a line per broken rule, as `checkPolicyContract` reports it, then totals
 * (exit 1); one that throws or cannot be loaded is one line (exit 2). By
 * default it replays the default study's scenarios and the contract
 * scenarios (a fact forgotten and stated again, an injection, an agent's
 * rounds of tool calls), so the forgetting and moderation rules are met.
 */

const KEEP_EDGES = join(ROOT, 'test', 'fixtures', 'policies', 'keep-edges.mjs');
const NOAH = join(ROOT, 'scenarios', 'noah-amnesia.yaml');

/** A module that keeps every exchange and erases nothing; `prompt` may be replaced. */
function keepAll(prompt = '({ messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length })'): string {
  const file = join(tempDir(), 'keep-all.mjs');
  writeFileSync(
    file,
    `export default {
  id: 'keep-all',
  describe: 'keeps every exchange, erases nothing',
  params: {},
  start(conversation) {
    const head = [...conversation.system];
    const kept = [];
    return {
      prompt: (pending, info) => ${prompt},
      commit: (exchange) => (kept.push(...exchange), []),
      forget: () => [],
      artifacts: () => [{ kind: 'transcript', texts: kept.map((m) => m.content), bytes: 0 }],
    };
  },
};
`,
  );
  return file;
}

describe('ctxsim check-policy', () => {
  const all = loadScenarios(contractScenarios()).length;

  it('a module that keeps the rules passes on the built-in scenarios, and a built-in on the scenarios given', async () => {
    expect(await cli('check-policy', KEEP_EDGES)).toMatchObject({ code: 0, out: `keep-edges keeps the ${CONTRACT_RULES.length} rules of the policy contract on ${all} scenarios\n`, err: '' });
    expect(await cli('check-policy', 'window-turns:turns=1|3', '--scenario', NOAH)).toMatchObject({ code: 0, out: 'window-turns keeps the 12 rules of the policy contract on 1 scenario\n' });
  });

  it('a module that erases nothing and stores injections breaks forget-cascade and moderation: a line each, as the library reports them, then totals (exit 1)', async () => {
    const file = keepAll();
    const r = await cli('check-policy', file, '--limit', '1000');
    expect([r.code, r.err]).toEqual([1, '']);
    const lines = r.out.trimEnd().split('\n');
    const { default: policy } = (await import(file)) as { default: Policy };
    const expected = checkPolicyContract(policy, loadScenarios(contractScenarios()), { limit: 1000 }).map(formatContractViolation);
    expect(lines.slice(0, -1)).toEqual(expected);
    expect(new Set(expected.map((l) => l.split(': ')[1]))).toEqual(new Set(['forget-cascade', 'moderation']));
    expect(lines.some((l) => l.startsWith('keep-all:moderation=drop: moderation: contract-refund-erase-inject turn 5'))).toBe(true);
    expect(lines.at(-1)).toBe(`keep-all breaks forget-cascade, moderation (${expected.length} in 3 variants) on ${all} scenarios`);
    // The docs show this run: its first two lines and its totals.
    const doc = readFileSync(join(ROOT, 'docs', 'custom-policies.md'), 'utf8');
    expect(doc).toContain(`$ npx ctxsim check-policy ./policies/keep-all.mjs\n${lines.slice(0, 2).join('\n')}\n…\n${lines.at(-1)}\n`);
    expect(doc).toContain(`keep-edges keeps the 12 rules of the policy contract on ${all} scenarios\n`);
    // Where nothing is forgotten and nothing is flagged, it keeps them all.
    expect((await cli('check-policy', file, '--scenario', NOAH)).code).toBe(0);
  });

  it('--limit stops at that many, and says so', async () => {
    const r = await cli('check-policy', keepAll(), '--limit', '2');
    expect(r.code).toBe(1);
    expect(r.out.trimEnd().split('\n')).toHaveLength(3);
    expect(r.out).toMatch(/\nkeep-all breaks forget-cascade \(2, the limit, in 1 variant\) on \d+ scenarios\n$/);
  });

  it('a policy that throws, a bad parameter, an unknown policy, no scenario: one line, exit 2', async () => {
    const throws = keepAll("info.turn.index === 2 ? (() => { throw new Error('no memory left'); })() : ({ messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length })");
    expect(await cli('check-policy', throws, '--scenario', NOAH)).toMatchObject({ code: 2, out: '', err: 'ctxsim: keep-all: turn 2 of noah-amnesia: threw: no memory left\n' });
    expect(await cli('check-policy', `${KEEP_EDGES}:kep=1`)).toMatchObject({ code: 2, err: `ctxsim: check-policy ${KEEP_EDGES}:kep=1: policy keep-edges: unknown parameter "kep" (expected one of keep, sessionCap, forget, moderation)\n` });
    expect((await cli('check-policy', 'nope')).err).toMatch(/^ctxsim: check-policy nope: unknown policy "nope" \(expected one of full, /);
    expect(await cli('check-policy', 'full', '--scenario', join(tempDir(), 'none.yaml'))).toMatchObject({ code: 2, out: '' });
  });
});

describe('checkPolicyContract with a policy that throws or returns the wrong shape', () => {
  const noah = loadScenarios([{ kind: 'glob', pattern: NOAH, base: ROOT }]);
  const policy = (prompt: Policy['start']): Policy => ({ id: 'bad', describe: 'broken on purpose', params: {}, start: prompt });

  it('what it throws is one line naming the variant, the turn and the scenario, the thrown error its cause', () => {
    const boom = new Error('no memory left');
    const throwing = policy(() => ({
      prompt: () => {
        throw boom;
      },
      commit: () => [],
      forget: () => [],
      artifacts: () => [],
    }));
    let caught: unknown;
    try {
      checkPolicyContract(throwing, noah);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(CtxsimError);
    expect([(caught as CtxsimError).message, (caught as CtxsimError).cause]).toEqual(['bad: turn 1 of noah-amnesia: threw: no memory left', boom]);
  });

  it('artifacts of the wrong shape, or a message changed, stop the check as they stop a run (one line, not a TypeError)', () => {
    const erase = loadScenarios([{ kind: 'glob', pattern: 'templates/contract/refund-erase-inject.yaml', base: ROOT }]);
    const keeping = (change: Partial<ReturnType<Policy['start']>>): Policy =>
      policy((c) => {
        const head = [...c.system];
        const kept: Message[] = [];
        return {
          prompt: (pending) => ({ messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length }),
          commit: (exchange) => (kept.push(...exchange), []),
          forget: () => [],
          artifacts: () => [],
          ...change,
        };
      });
    const stops = (p: Policy, c: readonly Conversation[]) => {
      try {
        checkPolicyContract(p, c, { variants: [{}] });
      } catch (e) {
        return e instanceof CtxsimError ? e.message : `not a CtxsimError: ${String(e)}`;
      }
      return 'no error';
    };
    // The check reads the artifacts after the forget event that follows turn 4.
    expect(stops(keeping({ artifacts: () => [{ kind: 'transcript', texts: 'all', bytes: 3 }] as never }), erase)).toBe(
      'bad: after turn 4 of contract-refund-erase-inject: artifacts: artifact transcript with texts "all" (expected a list of strings)',
    );
    const changes = keeping({
      prompt: (pending) => {
        (pending[0] as { content: string }).content = 'changed';
        return { messages: [], overBudget: false, upkeep: [], stablePrefix: 0 };
      },
    });
    expect(stops(changes, noah)).toMatch(/^bad: turn 1 of noah-amnesia: threw: Cannot assign to read only property 'content'/);
    expect(noah[0]!.turns[0]!.user.content).not.toBe('changed');
  });

  it('a plan of the wrong shape is a broken plan rule, not a crash of the check', () => {
    const shapeless = policy(() => ({ prompt: () => ({ messages: 'all of it' }) as never, commit: () => [], forget: () => [], artifacts: () => [] }));
    const broken = checkPolicyContract(shapeless, noah, { variants: [{}] }).map(formatContractViolation);
    expect(broken[0]).toBe('bad: plan: noah-amnesia turn 1: call 1: messages is "all of it", not an array');
    expect(new Set(broken.map((l) => l.split(': ')[1]))).toEqual(new Set(['plan']));
  });
});
