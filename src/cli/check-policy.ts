import { UsageError } from '../errors.js';
import { CONTRACT_RULES, checkPolicyContract, contractVariants, formatContractViolation } from '../policies/contract.js';
import { parseSpecString, resolvePolicy, type PolicyVariant } from '../policies/spec.js';
import { streamStudyParallel } from '../engine/parallel.js';
import { CtxsimError } from '../errors.js';
import type { Conversation } from '../types.js';
import { loadPolicyModules, resolveNamed, specModules } from '../study/policy-modules.js';
import { contractScenarios, loadScenarios } from '../study/study.js';
import type { IO } from './_io.js';
import { policyLimits, type StudyFlags } from './_study.js';

export interface CheckPolicyFlags extends Pick<StudyFlags, 'policyTimeout' | 'policyMemory'> {
  policy: string;
  scenario?: string[];
  seed: number;
  limit: number;
}

/**
 * `ctxsim check-policy`: `checkPolicyContract` from the command line. Prints
 * each broken rule on a line of its own (variant, rule, scenario, turn,
 * detail), then one line of totals; exit 1 when a rule is broken.
 */
export async function checkPolicy(flags: CheckPolicyFlags, io: IO): Promise<number> {
  const spec = parseSpecString(flags.policy);
  if (typeof spec === 'string') throw new UsageError(`check-policy ${flags.policy}: ${spec}`);
  const modules = await loadPolicyModules(specModules([flags.policy]), undefined, flags.policyTimeout);
  const variants = resolveNamed(spec.id, spec.given, modules, process.cwd());
  if (typeof variants === 'string') throw new UsageError(`check-policy ${flags.policy}: ${variants}`);
  const { policy } = variants[0]!;
  const sources = flags.scenario?.length ? flags.scenario.map((pattern) => ({ kind: 'glob' as const, pattern, base: process.cwd() })) : contractScenarios();
  const conversations = loadScenarios(sources);
  const given = spec.given.length ? { variants: [Object.fromEntries(spec.given)] } : {};
  if (variants[0]!.module) await withinLimits(variants, spec.given.length > 0, conversations, flags);
  const broken = checkPolicyContract(policy, conversations, { ...given, seed: flags.seed, limit: flags.limit });
  for (const v of broken) io.out(`${formatContractViolation(v)}\n`);
  const on = `${conversations.length} scenario${conversations.length === 1 ? '' : 's'}`;
  if (!broken.length) {
    io.out(`${policy.id} keeps the ${CONTRACT_RULES.length} rules of the policy contract on ${on}\n`);
    return 0;
  }
  const variantCount = new Set(broken.map((v) => v.policy)).size;
  const rules = [...new Set(broken.map((v) => v.rule))];
  io.out(`${policy.id} breaks ${rules.join(', ')} (${broken.length}${broken.length === flags.limit ? ', the limit,' : ''} in ${variantCount} variant${variantCount === 1 ? '' : 's'}) on ${on}\n`);
  return 1;
}

/**
 * A module's variants (those given, else the contract's) replayed first as
 * a run replays them, on a watched worker thread: a call that never
 * returns, or runs out of memory, stops the command (exit 2). Only those
 * limits stop it here; a rule the module breaks is the contract check's to
 * list.
 */
async function withinLimits(given: readonly PolicyVariant[], named: boolean, conversations: Conversation[], flags: CheckPolicyFlags): Promise<void> {
  const { policy, module } = given[0]!;
  const sets = named ? given : contractVariants(policy).flatMap((v) => {
    const r = resolvePolicy(policy, Object.entries(v));
    return typeof r === 'string' ? [] : r.map((x) => ({ ...x, module: module! }));
  });
  const settings = { seed: flags.seed, models: ['gpt-4o-mini'], tokenizer: 'chars4', cacheFolder: false as const, jobs: 1 };
  try {
    await streamStudyParallel({ ...settings, conversations, policies: sets, ...policyLimits(flags) }, () => {});
  } catch (e) {
    if (e instanceof CtxsimError && e.code === 'policy-limit') throw e;
  }
}
