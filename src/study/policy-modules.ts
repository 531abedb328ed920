import { resolve } from 'node:path';
import { CtxsimError } from '../errors.js';
import { REGISTRY } from '../policies/index.js';
import { isPolicyPath, loadPolicyModule, type ModuleLoadOptions, type PolicyModule } from '../policies/module.js';
import type { Given } from '../policies/module-link.js';
import { parseSpecString, resolvePolicy, resolveSpec, type PolicyVariant } from '../policies/spec.js';

/**
 * Policies named by the path of a JavaScript module (`--policy
 * ./policies/keep-edges.mjs:keep=1`, or a study entry whose key is a path,
 * relative to the study file) beside the built-in ones. Modules are loaded
 * first (importing is asynchronous), then specs resolve against the
 * built-ins and the loaded modules alike.
 */

/** Loaded policy modules by absolute path. */
export type PolicyModules = ReadonlyMap<string, PolicyModule>;

/** A module a spec names: its absolute path, how to show it, and the sets of parameters the specs give it (each as given: `[['keep', '1']]`, a list value a sweep). */
export interface ModuleRequest {
  file: string;
  shown: string;
  given?: Given[];
}

/** The module a spec's name points at, relative to `base`, or undefined when the name is a policy id; `given`, the spec's parameters. */
export function moduleRequest(name: string, base: string, given?: Given): ModuleRequest | undefined {
  const id = name.trim();
  return isPolicyPath(id) ? { file: resolve(base, id), shown: id, ...(given && { given: [given] }) } : undefined;
}

/** How modules are loaded: the time each import may take, their threads' memory (`ModuleLoadOptions`), and whether the contract check's sets of parameters are resolved too. */
export type ModuleLoading = Pick<ModuleLoadOptions, 'timeoutSeconds' | 'memoryMb' | 'contract'>;

/** How modules are loaded under the limits `--policy-timeout` and `--policy-memory` give. */
export function moduleLoading(limits: { policyTimeout?: number | undefined; policyMemory?: number | undefined }): ModuleLoading {
  return { ...(limits.policyTimeout !== undefined && { timeoutSeconds: limits.policyTimeout }), ...(limits.policyMemory !== undefined && { memoryMb: limits.policyMemory }) };
}

/**
 * Loads the modules requested (each file once, with every set of
 * parameters requested of it), in order. A module that cannot be loaded
 * fails with its own one-line error (`onError` may collect it instead); a
 * module whose id is a built-in policy's, or another module's, is an error
 * naming both. Each is imported on a thread of its own, which must finish
 * within `timeoutSeconds` (default `DEFAULT_POLICY_TIMEOUT`).
 */
export async function loadPolicyModules(requests: readonly ModuleRequest[], onError?: (e: CtxsimError, request: ModuleRequest) => void, loading: ModuleLoading = {}): Promise<Map<string, PolicyModule>> {
  const out = new Map<string, PolicyModule>();
  const byId = new Map<string, ModuleRequest>();
  const byFile = new Map<string, { request: ModuleRequest; given: Given[] }>();
  for (const r of requests) {
    const known = byFile.get(r.file);
    if (known) known.given.push(...(r.given ?? []));
    else byFile.set(r.file, { request: r, given: [...(r.given ?? [])] });
  }
  for (const { request: r, given } of byFile.values()) {
    try {
      const m = await loadPolicyModule(r.file, r.shown, { ...loading, given });
      const { id } = m.policy;
      if (REGISTRY.has(id)) throw new CtxsimError(`policy module ${r.shown}: id "${id}" is a built-in policy's; give the module an id of its own`, 'policy-module');
      const other = byId.get(id);
      if (other) throw new CtxsimError(`policy module ${r.shown}: id "${id}" is also the id of ${other.shown}; each module needs an id of its own`, 'policy-module');
      byId.set(id, r);
      out.set(r.file, m);
    } catch (e) {
      if (!(e instanceof CtxsimError) || !onError) throw e;
      onError(e, r);
    }
  }
  return out;
}

/**
 * Resolves a policy by id or module path (relative to `base`) with its
 * parameters: its variants (a list value makes a sweep), each carrying its
 * module's file and hash; or an error message.
 */
export function resolveNamed(name: string, given: readonly (readonly [string, unknown])[], modules: PolicyModules, base: string): PolicyVariant[] | string {
  const request = moduleRequest(name, base);
  if (!request) return resolveSpec(REGISTRY, name, given);
  const m = modules.get(request.file);
  if (!m) return `policy module ${request.shown} is not loaded (load it first: loadPolicyModules(specModules(specs)))`;
  const variants = resolvePolicy(m.policy, given);
  return typeof variants === 'string' ? variants : variants.map((v) => ({ ...v, module: { file: m.file, hash: m.hash, ...(m.imports && { imports: m.imports }) } }));
}

/** A command-line spec (`window-tokens:budget=2000`, `./keep-edges.mjs:keep=1`), resolved. */
export function resolveSpecString(text: string, modules: PolicyModules, base: string): PolicyVariant[] | string {
  const spec = parseSpecString(text);
  if (typeof spec === 'string') return spec;
  return resolveNamed(spec.id, spec.given, modules, base);
}

/** The modules command-line specs name, relative to the working folder, with the parameters each spec gives. */
export function specModules(specs: readonly string[], base = process.cwd()): ModuleRequest[] {
  return specs.flatMap((s) => {
    const spec = parseSpecString(s);
    const r = typeof spec === 'string' ? undefined : moduleRequest(spec.id, base, spec.given);
    return r ? [r] : [];
  });
}
