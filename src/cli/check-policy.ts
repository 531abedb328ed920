import { UsageError } from '../errors.js';
import { checkPolicyContract } from '../policies/contract/checker.js';
import { CONTRACT_RULES, formatContractViolation, type ContractViolation } from '../policies/contract/rules.js';
import { parseSpecString, resolvePolicy, type PolicyVariant } from '../policies/spec.js';
import type { Policy } from '../policies/types.js';
import { checkContractOnThread } from '../engine/parallel.js';
import { loadPolicyModules, moduleLoading, resolveNamed, specModules } from '../study/policy-modules.js';
import { contractScenarios, loadScenarios } from '../study/study.js';
import type { IO } from './_io.js';
import { policyLimits } from './_study.js';

/** Its own flags; the limits of policy modules are read with `policyLimits`. */
export interface CheckPolicyFlags {
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
  const modules = await loadPolicyModules(specModules([flags.policy]), undefined, { ...moduleLoading(policyLimits(flags)), contract: true });
  const variants = resolveNamed(spec.id, spec.given, modules, process.cwd());
  if (typeof variants === 'string') throw new UsageError(`check-policy ${flags.policy}: ${variants}`);
  const { policy, module } = variants[0]!;
  const sources = flags.scenario?.length ? flags.scenario.map((pattern) => ({ kind: 'glob' as const, pattern, base: process.cwd() })) : contractScenarios();
  const conversations = loadScenarios(sources);
  const options = { seed: flags.seed, limit: flags.limit };
  let broken: ContractViolation[];
  if (module) {
    const sets = spec.given.length ? variants : contractSets(policy, modules.get(module.file)?.contract ?? [], module);
    broken = await checkContractOnThread(sets, conversations, { ...options, ...policyLimits(flags) });
  } else {
    const given = spec.given.length ? { variants: [Object.fromEntries(spec.given)] } : {};
    broken = checkPolicyContract(policy, conversations, { ...given, ...options });
  }
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

/** A module's variants for the sets of parameters the contract check runs (`contractVariants`, resolved on the module's thread when it was loaded). */
function contractSets(policy: Policy, sets: readonly Record<string, unknown>[], module: NonNullable<PolicyVariant['module']>): PolicyVariant[] {
  return sets.flatMap((given) => {
    const r = resolvePolicy(policy, Object.entries(given));
    if (typeof r === 'string') throw new UsageError(`checkPolicyContract: ${r}`);
    return r.map((v) => ({ ...v, module }));
  });
}
