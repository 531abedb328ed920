#!/usr/bin/env node
/**
 * Checks that the packed package typechecks for a strict consumer: `npm pack`
 * the built package, install it with its runtime dependencies only (no dev
 * dependencies, and of @types only @types/node), and compile a file that uses
 * the public API with `strict` and `skipLibCheck: false`. Run by `npm run
 * check` (after `npm run build`); exits non-zero with tsc's errors otherwise.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const dir = mkdtempSync(join(tmpdir(), 'ctxsim-consumer-'));

const CONSUMER = `import { z } from 'zod';
import {
  budgetMarkdown, checkPolicyContract, compare, DEFAULT_LIMITS, defaultStudy, definePolicy, loadStudy, makeBaseline, memorySink, openTokenCounter,
  param, parseResultsJson, POLICIES, policyTable, runStudyPipeline, usd, type Policy, type StudySink, type TurnRecord,
} from 'ctxsim';

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
  const { output, fingerprint, policies, summary } = await runStudyPipeline({ ...study, tokenCache: false }, memorySink());
  const baseline = makeBaseline(fingerprint, summary);
  const gate = compare(baseline, baseline, DEFAULT_LIMITS);
  const first: TurnRecord | undefined = output.results.turns[0];
  const policy: Policy = POLICIES[0]!;
  const tokens = openTokenCounter('o200k_base').text('hello');
  const doc = parseResultsJson('{}', 'results.json');
  const sink: StudySink<number> | undefined = undefined;
  return [policyTable({ policies }, output.info), usd(first?.cost ?? 0n), gate.failed, policy.id, tokens, doc.schemaVersion, sink, budgetMarkdown(output.results, output.info)].join('\\n');
}
`;

try {
  const tarball = execFileSync(npm, ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').pop();
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'ctxsim'), { recursive: true });
  execFileSync('tar', ['-xzf', join(dir, tarball), '-C', join(modules, 'ctxsim'), '--strip-components=1']);
  // The runtime dependency closure, as installed here, and @types/node: nothing else a consumer would not have.
  const prod = execFileSync(npm, ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').slice(1);
  for (const path of [...prod, join(ROOT, 'node_modules', '@types', 'node')]) {
    const name = relative(join(ROOT, 'node_modules'), path);
    if (name.startsWith('..') || name.includes(`node_modules`)) continue;
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    try {
      symlinkSync(path, join(modules, name), 'dir');
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
  }
  writeFileSync(join(dir, 'consumer.ts'), CONSUMER);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] }, files: ['consumer.ts'] }),
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    process.stderr.write(`the packed package does not typecheck for a strict consumer:\n${e.stdout}${e.stderr}`);
    process.exitCode = 1;
  }
  if (!process.exitCode) console.log(`packed package typechecks for a strict consumer (${JSON.parse(readFileSync(join(modules, 'ctxsim', 'package.json'), 'utf8')).version}, skipLibCheck: false)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
