/**
 * `ctxsim/policies`: the policy registry and specs, policy modules, the
 * building blocks the built-in policies are made of, and the types a policy
 * works with. The root export has `definePolicy`, `param`,
 * `checkPolicyContract`, `POLICIES` and the `Policy` type.
 *
 * @packageDocumentation
 * @module ctxsim/policies
 */

export { AGENT_POLICIES, CHAT_POLICIES, REGISTRY } from '../policies/index.js';
export { canonicalName, resolveSpec } from '../policies/spec.js';
export { policiesFromFlags } from '../study/study.js';
export { loadPolicyModules, specModules, type ModuleLoading, type ModuleRequest, type PolicyModules } from '../study/policy-modules.js';
export { isPolicyPath, loadPolicyModule, type ModuleLoadOptions, type PolicyModule } from '../policies/module.js';
export type { Given } from '../policies/module-link.js';
export type {
  Artifact,
  Blocks,
  Exchange,
  FactSheetBlock,
  FactSheetParams,
  ForgetFact,
  ForgetInfo,
  History,
  ParamSpec,
  ParamTable,
  ParamValue,
  Params,
  PolicyDeps,
  RunningSummaryBlock,
  SessionParams,
  SessionStart,
  SummaryParams,
  TranscriptBlock,
  ToolView,
  TurnInfo,
  TurnStart,
} from '../policies/types.js';
export type { ArtifactKind } from '../types.js';
export type { PolicyParams } from '../policies/define.js';
export { COMMON_PARAMS, paramsFromTable } from '../policies/params.js';
export { blocks } from '../policies/blocks.js';
export type { ContractRule } from '../policies/contract/rules.js';
export type { ContractOptions } from '../policies/contract/checker.js';
