#!/usr/bin/env node
/**
 * Checks that the packed package typechecks for a strict consumer: `npm pack`
 * the built package, install it with its runtime dependencies only (no dev
 * dependencies, no @types/node: scripts/packed.mjs), and compile with
 * `strict` and `skipLibCheck: false`:
 *
 * - a file that uses the public API, the root and every sub-path of the
 *   package's exports, first without @types/node (a consumer need not have
 *   Node's types), then with them;
 * - the example policy `ctxsim init` scaffolds, as JavaScript under
 *   `checkJs`, as an editor with ctxsim installed checks it;
 * - every `ts` and `js` code sample of docs/custom-policies.md and
 *   docs/api.md: a sample that is a whole module as it is, a fragment inside
 *   the code it stands for (SAMPLE_WRAPPERS, by its first line). A sample no
 *   wrapper fits fails the check.
 *
 * Run by `npm run check` (after `npm run build`); exits non-zero with tsc's
 * errors otherwise.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installPacked, linkDependency, ROOT } from './packed.mjs';

const dir = mkdtempSync(join(tmpdir(), 'ctxsim-consumer-'));
const DOCS = ['docs/custom-policies.md', 'docs/api.md'];

/** The package's sub-paths (`ctxsim/policies`, …), from its exports: those that are modules of the library (not files such as the schemas). */
const SUBPATHS = Object.entries(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports)
  .filter(([key, target]) => key !== '.' && typeof target === 'object' && target.types)
  .map(([key]) => `ctxsim/${key.slice(2)}`);

/**
 * A consumer of the root and of every sub-path: each sub-path imported as a
 * namespace (so its declarations are compiled, whatever names it has), and
 * the common calls written out.
 */
const CONSUMER = `import { z } from 'zod';
import {
  checkPolicyContract, compare, DEFAULT_LIMITS, defaultStudy, definePolicy, loadStudy, makeBaseline, memorySink,
  param, parseResultsJson, POLICIES, runStudyPipeline, usd, type Policy, type StudySink, type TurnRecord,
} from 'ctxsim';
import { runStudy, type RunResults } from 'ctxsim/engine';
import { gateMarkdown, type RowComparison } from 'ctxsim/gate';
import { blocks, REGISTRY, type Blocks } from 'ctxsim/policies';
import { builtinPrices, lookup, type ModelPrice } from 'ctxsim/pricing';
import { dollars, turnsCsv, type Pico } from 'ctxsim/records';
import { budgetMarkdown, policyTable } from 'ctxsim/reports';
import { generateConversations, type Turn } from 'ctxsim/scenarios';
import { textSink } from 'ctxsim/study';
import { openTokenCounter, type TokenizerName } from 'ctxsim/tokens';
import { simulatedUpkeep, type Upkeep } from 'ctxsim/upkeep';
${SUBPATHS.map((s, i) => `import * as sub${i} from '${s}';`).join('\n')}

export const subpaths = [${SUBPATHS.map((_, i) => `sub${i}`).join(', ')}];

export const keepEdges = definePolicy({
  id: 'keep-edges',
  describe: 'the newest turn only, after the first keep messages',
  params: z.object({ keep: param.int({ default: 1, min: 0, describe: 'messages kept from the start' }) }),
  start(conversation, params) {
    const keep: number = params.keep;
    return {
      prompt: (pending) => ({ messages: [...conversation.system, ...pending], overBudget: false, upkeep: [], stablePrefix: Math.min(keep, conversation.system.length) }),
      commit: () => [],
      forget: () => [],
      artifacts: () => [],
    };
  },
});
export const problems = checkPolicyContract(keepEdges, []).map((v) => v.rule);

export async function consume(file?: string): Promise<string> {
  const study = file ? await loadStudy(file) : defaultStudy();
  const { output, fingerprint, policies, summary } = await runStudyPipeline({ ...study, cacheFolder: false }, memorySink());
  const baseline = makeBaseline(fingerprint, summary);
  const gate = compare(baseline, baseline, DEFAULT_LIMITS);
  const rows: readonly RowComparison[] = gate.rows;
  const first: TurnRecord | undefined = output.results.turns[0];
  const policy: Policy = POLICIES[0]!;
  const counter = openTokenCounter('o200k_base');
  const tokens = counter.text('hello');
  const upkeep: Upkeep = simulatedUpkeep(counter);
  const tokenizer: TokenizerName = 'o200k_base';
  const doc = parseResultsJson('{}', 'results.json');
  const sink: StudySink<number> | undefined = undefined;
  const conversations = generateConversations({ profile: 'support', count: 2, seed: 1 });
  const turn: Turn | undefined = conversations[0]?.turns[0];
  const replayed: RunResults = runStudy({ ...study, conversations, cacheFolder: false });
  const price: ModelPrice = lookup(builtinPrices(), 'gpt-4o-mini');
  const input: Pico = price.input;
  const kit: Blocks = blocks;
  const csv: StudySink<string> = textSink('csv');
  return [
    policyTable({ policies }, output.info), usd(first?.cost ?? 0n), gateMarkdown(gate), rows.length, policy.id, REGISTRY.size, tokens, tokenizer, typeof upkeep,
    doc.schemaVersion, sink, budgetMarkdown(output.results, output.info), turn?.user, turnsCsv(replayed), dollars(input, 2), typeof kit.transcript, typeof csv.finish,
  ].join('\\n');
}
`;

/** The type of a policy whose own parameters are `own`, in a JSDoc comment. */
const policyOf = (own) => `/** @type {import('ctxsim').Policy<${own} & import('ctxsim').CommonParams>} */`;

/**
 * How a fragment of the docs is checked: by its first line, the code around
 * it (`null`: a whole module, checked as it is). A fragment of a session's
 * members is split at `split`: the lines before it go in `start`.
 */
const SAMPLE_WRAPPERS = [
  // The contract: the session's methods stand for any.
  { first: "/** @type {import('ctxsim').Policy<", wrap: (code) => `${['prompt', 'commit', 'forget', 'artifacts'].map((m) => `/** @type {any} */ let ${m};`).join('\n')}\n${code}` },
  // An upkeep call.
  { first: "{ kind: 'summary',", wrap: (code) => `/** @type {import('ctxsim').PromptPlan['upkeep'][number]} */\nexport const call = ${code};` },
  // The worked example's session.
  { first: 'start(conversation, params, { blocks }) {', wrap: (code) => `${policyOf('{ keep: number }')}\nexport default { id: 'keep-edges', describe: '', params: {},\n${code}\n};` },
  // summary-buffer's memory.
  {
    first: 'start(conversation, params, deps) {',
    wrap: (code) => `${policyOf("import('ctxsim/policies').SummaryParams & { budget: number; keepRecent: number }")}\nexport default { id: 'summary-keep', describe: '', params: {},\n${code}\n};`,
  },
  // The token window of window-tokens.
  {
    first: 'const room = params.budget',
    wrap: (code) => `${policyOf('{ budget: number }')}
export default { id: 'window', describe: '', params: {},
  start(conversation, params, { tokens, blocks }) {
    const head = blocks.pinned(conversation);
    const history = blocks.transcript(params);
    return {
      prompt(pending) {
${code}
        return { messages: [...head, ...kept, ...pending], overBudget: room < 0, upkeep: [], stablePrefix: head.length };
      },
      commit: history.commit,
      forget: history.forget,
      artifacts: () => [history.artifact()],
    };
  },
};`,
  },
  // A store of one's own, erased under the cascade.
  {
    first: 'const store = blocks.vectorStore<string>();',
    split: 'forget(facts, info) {',
    wrap: (start, members) => `import { definePolicy } from 'ctxsim';
import { z } from 'zod';
export default definePolicy({ id: 'store', describe: '', params: z.object({}),
  start(conversation, params, { blocks }) {
    const history = blocks.transcript(params);
${start}
    return {
      prompt: (pending) => ({ messages: [...blocks.pinned(conversation), ...pending], overBudget: false, upkeep: [], stablePrefix: 0 }),
      commit: history.commit,
${members}
    };
  },
});`,
  },
];

/** The `ts` and `js` code samples of a doc, each a file to check: its name and text, and whether it needs Node's types. */
function docSamples(doc) {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const out = [];
  for (const m of text.matchAll(/^```(ts|js)\n([\s\S]*?)^```$/gm)) {
    const [, lang, code] = m;
    const line = text.slice(0, m.index).split('\n').length;
    const name = `sample-${doc.replace(/\W/g, '-')}-${line}.${lang === 'ts' ? 'mts' : 'mjs'}`;
    const firstLine = code.trimStart().split('\n')[0];
    let file = code;
    if (!/^import /m.test(code)) {
      const wrapper = SAMPLE_WRAPPERS.find((w) => firstLine.startsWith(w.first));
      if (!wrapper) throw new Error(`${doc}:${line}: a ${lang} sample that is not a module and that no wrapper of check-consumer.mjs fits: ${firstLine}`);
      if (wrapper.split) {
        const at = code.indexOf(wrapper.split);
        if (at < 0) throw new Error(`${doc}:${line}: a ${lang} sample without the line its wrapper splits at (${wrapper.split})`);
        file = wrapper.wrap(code.slice(0, at), code.slice(at));
      } else {
        file = wrapper.wrap(code);
      }
    }
    out.push({ name, text: file, node: /from 'node:/.test(file) });
  }
  return out;
}

/** Compiles files in `dir` with tsc, strict; returns tsc's output on failure. */
function tsc(name, files, types) {
  const config = `tsconfig.${name}.json`;
  const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, allowJs: true, checkJs: true, types };
  writeFileSync(join(dir, config), JSON.stringify({ compilerOptions, files }));
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `${e.stdout}${e.stderr}`;
  }
}

try {
  const { pkg } = installPacked(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
  // The example policy as `ctxsim init` writes it, from the packed templates (the docs' test sample imports it from there).
  mkdirSync(join(dir, 'policies'));
  copyFileSync(join(pkg, 'templates', 'init', 'policies', 'example-policy.mjs'), join(dir, 'policies', 'example-policy.mjs'));
  const samples = DOCS.flatMap(docSamples);
  for (const s of samples) writeFileSync(join(dir, s.name), s.text);
  const common = ['consumer.ts', 'policies/example-policy.mjs', ...samples.filter((s) => !s.node).map((s) => s.name)];
  const failures = [];
  const without = tsc('no-node', common, []);
  if (without) failures.push(`without @types/node:\n${without}`);
  linkDependency(dir, '@types/node');
  const withNode = tsc('node', [...common, ...samples.filter((s) => s.node).map((s) => s.name)], ['node']);
  if (withNode) failures.push(`with @types/node:\n${withNode}`);
  if (failures.length) {
    process.stderr.write(`the packed package, its example policy or a docs sample does not typecheck for a strict consumer:\n${failures.join('')}`);
    process.exitCode = 1;
  } else {
    const version = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version;
    console.log(`packed package typechecks for a strict consumer, with and without @types/node (${version}, skipLibCheck: false): the root and ${SUBPATHS.length} sub-paths, with the example policy (checkJs) and ${samples.length} docs samples`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
