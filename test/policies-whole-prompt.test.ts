import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runStudyParallel } from '../src/engine/parallel.js';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext, runStudy } from '../src/engine/run.js';
import { blocks } from '../src/policies/blocks.js';
import { sessionTokens } from '../src/policies/session-tokens.js';
import { validateDocs } from '../src/scenario/docs.js';
import { importDataset } from '../src/scenario/import/index.js';
import { addUnloggedPrefixes } from '../src/study/billed.js';
import { loadPolicyModules, resolveNamed, specModules } from '../src/study/policy-modules.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { toolDefTokens } from '../src/tokens/tools.js';
import type { Conversation, ToolDef } from '../src/types.js';
import { conversation, randomConversation, variant } from './_policies.js';
import { itShared, ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Every budget and threshold counts the whole prompt, as the provider does:
 * the tool definitions offered and an imported log's unlogged prefix are
 * sent in every call, so they count toward `clear-tool-results`' trigger,
 * `compact`'s share of the window and the budgets of the windows,
 * `priority` and `summary-buffer`. A session learns of them in one place,
 * the counter it is given (`sessionTokens`: `tokens.carried`).
 */

const TOOLS: ToolDef[] = [
  { name: 'read_file', description: 'Read a file of the repository', parameters: { type: 'object', properties: { path: { type: 'string', description: 'the path from the root' } }, required: ['path'] } },
  { name: 'run_tests', description: 'Run the test suite and return its output', parameters: { type: 'object', properties: {} } },
];
const PREFIX = 1000;
const OUT = (name: string, n: number) => `${name} output ${n}: ${'lorem ipsum dolor sit amet '.repeat(25).trim()}`;

/** An agent session of one turn and five rounds, with what every call carries besides its messages (tool definitions and an unlogged prefix) or without. */
function agent(carries: boolean): Conversation {
  return conversation({
    id: carries ? 'carries' : 'bare',
    system: 'You fix bugs in the repository.',
    ...(carries && { tool_defs: TOOLS, unlogged_prefix: { tokens: PREFIX, from: 'billed' } }),
    turns: [
      {
        user: 'The date parser crashes on leap days; fix it.',
        tools: [1, 2, 3, 4, 5].map((n) => ({ assistant: `Step ${n}.`, calls: [{ call: n % 2 ? 'read_file' : 'run_tests', ...(n % 2 && { args: { path: `src/f${n}.py` } }), result: OUT(n % 2 ? 'read_file' : 'run_tests', n) }] })),
        assistant: 'Fixed.',
      },
    ],
  });
}

const ctx = replayContext({ model: 'gpt-4o-mini', tokenizer: 'chars4', seed: 42 });

function calls(spec: string, c: Conversation, context = ctx): SentCall[] {
  const out: SentCall[] = [];
  replay(c, variant(spec), context, (_, call) => out.push(call));
  return out;
}

const cleared = (call: SentCall) => call.plan.messages.filter((m) => m.role === 'tool' && m.content.startsWith('[result of')).length;

describe('what a session is told every call carries', () => {
  it('is the tool definitions’ tokens and the unlogged prefix: what the meter adds to each prompt’s messages', () => {
    const tokens = new TokenCounter('chars4');
    const carries = sessionTokens(tokens, agent(true));
    expect(carries.carried).toBe(PREFIX + toolDefTokens(TOOLS, tokens));
    expect(sessionTokens(tokens, agent(false))).toBe(tokens);
    expect(tokens.carried).toBe(0);
    // Every other count is the run's: a summarizer's prompt carries nothing of the chat's.
    const m = agent(true).turns[0]!.user;
    expect([carries.message(m), carries.prompt([m])]).toEqual([tokens.message(m), tokens.prompt([m])]);
    // The same counter underneath: a text counted through the session's is the run's, its statistics too.
    const calls0 = tokens.tokenizerCalls;
    expect(carries.text('a text no one counted yet')).toBe(tokens.text('a text no one counted yet'));
    expect([tokens.tokenizerCalls, carries.tokenizerCalls]).toEqual([calls0 + 1, calls0 + 1]);
    expect(carries.carrying(carries.carried)).toBe(carries);
    expect(blocks.promptTokens(carries, [m])).toBe(carries.carried + tokens.prompt([m]));
    expect(blocks.fixedTokens(carries, [m])).toBe(blocks.promptTokens(carries, [m]));
    // The meter's count of a call under full is that whole prompt.
    for (const call of calls('full', agent(true))) expect(call.promptTokens).toBe(blocks.promptTokens(carries, call.plan.messages));
  });
});

describe('thresholds', () => {
  const full = calls('full', agent(true)).map((c) => c.promptTokens);
  const carried = PREFIX + toolDefTokens(TOOLS, ctx.tokens);

  it('clear-tool-results clears on the calls whose whole prompt passes its trigger, the carried tokens counted', () => {
    // A trigger that the prompts' messages alone never pass, but the third call's whole prompt does.
    const trigger = full[2]! - 1;
    expect(Math.max(...full) - carried).toBeLessThanOrEqual(trigger);
    const got = calls(`clear-tool-results:trigger=${trigger},keep=0`, agent(true));
    expect(got.map((c) => cleared(c) > 0)).toEqual(full.map((n, i) => n > trigger && i > 1));
    expect(got.map(cleared)).toEqual([0, 0, 1, 2, 3, 4]);
    // Without what it carries, the same messages pass nothing.
    expect(calls(`clear-tool-results:trigger=${trigger},keep=0`, agent(false)).map(cleared)).toEqual([0, 0, 0, 0, 0, 0]);
    // As a pipeline's stage, the same.
    expect(calls(`pipeline:stages=clear-tool-results:trigger=${trigger},keep=0`, agent(true)).map(cleared)).toEqual([0, 0, 1, 2, 3, 4]);
  });

  it('compact compacts at the first call whose whole prompt passes its share of the window', () => {
    // The whole of the fourth call's prompt passes the window (at: 1), the messages of no call do.
    const window = full[3]! - 1;
    expect(Math.max(...full) - carried).toBeLessThanOrEqual(window);
    const summarized = (c: SentCall) => c.plan.messages.some((m) => m.origin === 'summary');
    expect(calls(`compact:window=${window},at=1,keepRecent=0`, agent(true)).map(summarized)).toEqual([false, false, false, true, true, true]);
    expect(calls(`compact:window=${window},at=1,keepRecent=0`, agent(false)).map(summarized)).toEqual([false, false, false, false, false, false]);
  });
});

describe('budgets', () => {
  const specs = ['window-tokens:budget=B', 'window:budget=B', 'priority:budget=B', 'summary-buffer:budget=B,summaryTokens=40'];

  it('a prompt not over budget is within it as the meter counts it, tool definitions and unlogged prefix included', () => {
    fc.assert(
      fc.property(randomConversation, fc.integer({ min: 250, max: 900 }), fc.integer({ min: 0, max: 300 }), fc.constantFrom(...specs), (c, budget, prefix, spec) => {
        const carrying: Conversation = { ...c, toolDefs: TOOLS, unloggedTokens: prefix };
        for (const call of calls(spec.replace('B', String(budget)), carrying)) if (!call.plan.overBudget) expect(call.promptTokens).toBeLessThanOrEqual(budget);
      }),
      { seed: 45, numRuns: 60 },
    );
  });

  it('over budget when what every call carries leaves no room for the pinned prompt and the turn: said by the plan, kept by the run’s checks', () => {
    const first = calls('full', agent(true))[0]!;
    const messagesOnly = first.promptTokens - carried();
    // Room for the messages of the first call, none once the carried tokens are counted.
    const budget = messagesOnly + 1;
    // The run's per-call checks (guard) count the prompt as the policy does: they accept the plan's overBudget.
    expect(calls(`window-tokens:budget=${budget}`, agent(true))[0]!.plan.overBudget).toBe(true);
    expect(calls(`window-tokens:budget=${budget}`, agent(false))[0]!.plan.overBudget).toBe(false);
  });

  function carried(): number {
    return PREFIX + toolDefTokens(TOOLS, ctx.tokens);
  }
});

const built = existsSync(join(ROOT, 'dist', 'policies', 'module-host.js')) && statSync(join(ROOT, 'dist', 'policies', 'module-host.js')).mtimeMs >= statSync(join(ROOT, 'src', 'policies', 'session-tokens.ts')).mtimeMs;

/** window-tokens, made of the building blocks in a module of one's own. */
const ROOM_MODULE = `export default {
  id: 'room',
  describe: 'the newest messages that fit the budget, from the blocks',
  params: { budget: { default: 300, kind: 'int', min: 1 } },
  start(conversation, params, deps) {
    const { blocks } = deps;
    const head = blocks.pinned(conversation);
    const history = blocks.transcript(params);
    return {
      prompt(pending) {
        const room = params.budget - blocks.fixedTokens(deps.tokens, [...head, ...pending]);
        const kept = room > 0 ? blocks.fromFirstUser(blocks.newestThatFit(deps.tokens, history.flat, room)) : [];
        return { messages: [...head, ...kept, ...pending], overBudget: room < 0, upkeep: [], stablePrefix: head.length };
      },
      commit: history.commit,
      forget: history.forget,
      artifacts: () => [history.artifact()],
    };
  },
};
`;

describe.skipIf(!built)(`a policy module on its own thread${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
  it('is told what every call carries, as a built-in is: made of the blocks, it keeps what window-tokens keeps', async () => {
    const file = join(tempDir(), 'room.mjs');
    writeFileSync(file, ROOM_MODULE);
    const specs = [`${file}:budget=900`];
    const linked = resolveNamed(file, specModules(specs)[0]!.given![0]!, await loadPolicyModules(specModules(specs)), ROOT);
    if (typeof linked === 'string') throw new Error(linked);
    const conversations = [agent(true), conversation({ id: 'chat', tool_defs: TOOLS, turns: Array.from({ length: 12 }, (_, i) => ({ user: `Question ${i}: ${OUT('q', i)}`, assistant: `Answer ${i}.` })) })];
    const opts = { conversations, seed: 7, models: ['gpt-4o-mini'], tokenizer: 'chars4', cacheFolder: false as const };
    const onThread = await runStudyParallel({ ...opts, policies: linked, jobs: 1 });
    const builtIn = runStudy({ ...opts, policies: [variant('window-tokens:budget=900')] });
    const tokens = (r: typeof builtIn) => r.turns.map((t) => [t.scenario, t.turn, t.inputTokens, t.overBudget]);
    expect(tokens(onThread)).toEqual(tokens(builtIn));
  });
});

const SAMPLE = 'agent_transcripts_sample/claude-code_sonnet-4-5_subagent-a2898e3.jsonl';

itShared(SAMPLE, 'the real Claude Code session with its unlogged prefix: clearing and compaction fire where its whole prompts pass them, where its logged messages alone never do', (path) => {
  const { docs, conversations } = importDataset('claude-code', { path, file: 'session.jsonl', base: ROOT });
  addUnloggedPrefixes(docs, conversations);
  const [session] = validateDocs(docs, () => 'session.jsonl');
  const prefix = session!.unloggedTokens!;
  expect(prefix).toBeGreaterThan(13_000);
  const on = replayContext({ seed: 0, model: session!.model!, tokenizer: 'auto' });
  const whole = calls('full', session!, on).map((c) => c.promptTokens);
  // A trigger above every prompt's logged messages, below the whole of the fourth call's and after.
  const trigger = Math.max(...whole) - prefix + 1;
  const passes = whole.map((n) => n > trigger);
  expect(passes.indexOf(true)).toBe(3);
  const clearing = calls(`clear-tool-results:trigger=${trigger}`, session!, on);
  expect(clearing.map((c) => cleared(c) > 0)).toEqual(passes);
  const bare: Conversation = { ...session!, unloggedTokens: 0 };
  expect(calls(`clear-tool-results:trigger=${trigger}`, bare, on).every((c) => cleared(c) === 0)).toBe(true);
  // Compaction at 80% of a window the whole fourth prompt passes and the messages never do.
  const window = Math.ceil(trigger / 0.8);
  const compacting = replay(session!, variant(`compact:window=${window}`), on);
  expect(compacting.turns.reduce((n, t) => n + t.auxInputTokens, 0)).toBeGreaterThan(0);
  expect(replay(bare, variant(`compact:window=${window}`), on).turns.reduce((n, t) => n + t.auxInputTokens, 0)).toBe(0);
});
