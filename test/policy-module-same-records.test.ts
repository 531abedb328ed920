import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runStudyParallel } from '../src/engine/parallel.js';
import { runStudy, type RunResults } from '../src/engine/run.js';
import type { RunOptions } from '../src/engine/spec.js';
import type { Policy, PolicyVariant } from '../src/policies/types.js';
import { loadPolicyModules, resolveNamed, specModules } from '../src/study/policy-modules.js';
import { loadScenarios, loadStudy } from '../src/study/study.js';
import { studyUpkeep } from '../src/recording/upkeep.js';
import { displayPath } from '../src/output/display.js';
import { recordCli } from './_io.js';
import { serverForFile } from './_openai-server.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * A policy module on its own thread is given what it was given on the
 * replay's thread: its seeded stream draws the same numbers, its token
 * counts and the building blocks are the same, upkeep (simulated there,
 * recorded asked of the replay) answers the same, and what it returns
 * comes back as the same messages. So its records are those of the same
 * policy object run on the replay's thread, simulated and recorded alike.
 */

const built = existsSync(join(ROOT, 'dist', 'policies', 'module-host.js')) && statSync(join(ROOT, 'dist', 'policies', 'module-host.js')).mtimeMs >= statSync(join(ROOT, 'src', 'policies', 'module-host.ts')).mtimeMs;

/** A module made of the building blocks: a fact sheet, a running summary that draws from the stream, retrieval over what it folded, the last exchanges. */
const BLOCKS_MODULE = `export default {
  id: 'blocks-memory',
  describe: 'a fact sheet, a running summary, retrieval and the last exchanges',
  params: { keep: { default: 0.7, kind: 'probability' } },
  start(conversation, params, deps) {
    const { blocks } = deps;
    const head = blocks.pinned(conversation);
    const memory = blocks.runningSummary(conversation, { summaryTokens: 60, keep: params.keep, forget: params.forget, moderation: params.moderation, sessionCap: params.sessionCap }, deps);
    const sheet = blocks.factSheet({ recall: 0.8, sheetTokens: 60 }, deps);
    const store = blocks.vectorStore();
    const gate = blocks.turnGate();
    return {
      prompt(pending, info) {
        const upkeep = [];
        if (gate.first(info) && memory.open().length > 2) {
          for (const m of memory.open()[0]) store.add(m, deps.upkeep.embed(m.content, 'text-embedding-3-small').vector, info.time);
          upkeep.push(memory.fold(memory.open().length - 2));
        }
        const query = deps.upkeep.embed(pending[0].content, 'text-embedding-3-small').vector;
        const found = store.best(query, 1).map((h) => h.entry.value);
        const recent = blocks.newestThatFit(deps.tokens, memory.open().flat(), 400);
        const messages = [...head, ...sheet.messages(), ...memory.message(), ...blocks.fromFirstUser([...found, ...recent]), ...pending];
        return { messages, overBudget: false, upkeep, stablePrefix: head.length };
      },
      commit(exchange, info) {
        return [...memory.commit(exchange, info), sheet.read(exchange, info)];
      },
      forget(facts, info) {
        sheet.erase(facts);
        const values = blocks.valuesOf(facts);
        store.remove((m) => blocks.holds(m.content, values));
        return memory.forget(facts, info);
      },
      artifacts: () => [...memory.artifacts(), sheet.artifact()],
    };
  },
};
`;

/** The module's file, and its default export imported here (the same code, on this thread). */
async function module(dir = tempDir()): Promise<{ file: string; policy: Policy }> {
  const file = join(dir, 'blocks-memory.mjs');
  writeFileSync(file, BLOCKS_MODULE);
  const { default: policy } = (await import(pathToFileURL(file).href)) as { default: Policy };
  return { file, policy };
}

/** Its variants, as a run resolves them (on the module's thread), and the same on this thread. */
async function variants(file: string, policy: Policy, spec: string): Promise<{ linked: PolicyVariant[]; here: PolicyVariant[] }> {
  const specs = [`${file}${spec}`];
  const modules = await loadPolicyModules(specModules(specs));
  const linked = resolveNamed(file, specModules(specs)[0]!.given![0]!, modules, ROOT);
  if (typeof linked === 'string') throw new Error(linked);
  return { linked, here: linked.map((v) => ({ name: v.name, policy, params: v.params })) };
}

const records = (r: RunResults) => ({ turns: r.turns, probes: r.probes, summary: r.summary, violations: r.violations });

const { url } = serverForFile();

describe.skipIf(!built)(`a policy module's records are those of its policy run on the replay's thread${built ? '' : ' (skipped: dist/ is missing or stale)'}`, () => {
  it('simulated upkeep, on the shipped and the contract scenarios, every model, sweeps of its parameter', async () => {
    const { file, policy } = await module();
    const { linked, here } = await variants(file, policy, ':keep=0.3|1,sessionCap=4');
    const conversations = loadScenarios([
      { kind: 'glob', pattern: 'scenarios/*.yaml', base: ROOT },
      { kind: 'glob', pattern: 'templates/contract/*.yaml', base: ROOT },
    ]);
    const opts: Omit<RunOptions, 'policies'> = { conversations, seed: 7, models: ['gpt-4o-mini', 'claude-sonnet-4-5'], tokenizer: 'chars4', cacheFolder: false };
    const onThread = await runStudyParallel({ ...opts, policies: linked, jobs: 2 });
    expect(onThread.turns.length).toBeGreaterThan(100);
    expect(records(onThread)).toStrictEqual(records(runStudy({ ...opts, policies: here })));
  });

  it('recorded upkeep: a recording with the module on its thread leaves a cassette that replays it on this thread with no miss, to the same records', async () => {
    const dir = tempDir();
    const { file, policy } = await module(dir);
    const study = join(dir, 'study.yaml');
    writeFileSync(study, [`scenarios: [${JSON.stringify(join(ROOT, 'test', 'fixtures', 'upkeep', 'scenario.yaml'))}]`, 'policies:', `  - ${JSON.stringify(file)}`, `upkeep: {mode: record, baseURL: '${url()}', apiKeyEnv: CTXSIM_TEST_UPKEEP_KEY, cassette: c.jsonl}`, ''].join('\n'));
    const rec = await recordCli(['run', study, '--upkeep', 'record', '--tokenizer', 'chars4', '--no-token-cache', '--quiet', '--out', join(dir, 'results.json')], { CTXSIM_TEST_UPKEEP_KEY: 'sk-test-0123456789abcdef' });
    expect([rec.code, rec.stderr]).toEqual([0, '']);
    const replayStudy = await loadStudy(study, { upkeep: { mode: 'replay' }, settings: { tokenizer: 'chars4' } });
    const conversations = loadScenarios(replayStudy.scenarios);
    const upkeep = await studyUpkeep(replayStudy, conversations, displayPath);
    const { linked, here } = await variants(file, policy, '');
    const opts = { ...replayStudy, ...upkeep, conversations, cacheFolder: false as const };
    const onThread = await runStudyParallel({ ...opts, policies: linked, jobs: 1 });
    expect(onThread.turns.some((t) => t.auxInputTokens > 0)).toBe(true);
    expect(records(onThread)).toStrictEqual(records(runStudy({ ...opts, policies: here })));
  });
});
