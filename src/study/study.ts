import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { globSync } from 'tinyglobby';
import { z } from 'zod';
import { ScenarioError, UsageError, type Problem } from '../errors.js';
import { CHAT_POLICIES, REGISTRY } from '../policies/index.js';
import { STAGE_SEPARATOR } from '../policies/pipeline.js';
import { parseSpecString, policyEntrySchema, resolveSpec, type PolicyVariant } from '../policies/spec.js';
import type { Given } from '../policies/module-link.js';
import { loadPolicyModules, moduleLoading, moduleRequest, resolveNamed, resolveSpecString, type ModuleLoading, type PolicyModules } from './policy-modules.js';
import { loadPrices } from '../pricing/load.js';
import { lookup, type PriceTable } from '../pricing/prices.js';
import { DURATION } from '../pricing/settings.js';
import { keysOf, readSettings, settingKeyDescriptions, settingKeys, STDOUT, WRITTEN_SETTINGS, type ScenarioSource, type StudyOwnSettings, type StudySettings } from './settings.js';
import type { Conversation } from '../types.js';
import type { StudyList } from '../records/info.js';
import type { Conversations } from '../engine/spec.js';
import { SourceDoc } from '../text/document.js';
import { loadScenarioPlaced } from './scenario-file.js';
import { fileJsonSchema, weightSchema } from '../scenario/schema.js';
import { PROFILES } from '../scenario/generate/index.js';
import { IMPORTERS } from '../scenario/import/index.js';
import { defaultUpkeep, NETWORK_MODES, networkProblem, withUpkeepOverrides, type UpkeepMode, type UpkeepOverrides, type UpkeepSettings } from '../recording/upkeep.js';
import { outsideProblem, studyRoots } from './confine.js';
import { Journal } from '../upkeep/journal.js';
import { PACKAGE_DIR, readInputText, unreadableReason } from '../process.js';
import { displayPath } from '../output/display.js';
import { generatedSet, loadSource, MAX_GENERATE_COUNT, sourceEntry, weighted, type GeneratedSet, type GenerateSource, type LoadOptions } from './sources.js';

export type { GenerateSource, GlobSource, ImportSource, LoadOptions } from './sources.js';

export { STDOUT, type ScenarioSource } from './settings.js';

/**
 * A study with every path resolved and every policy checked: the run and
 * report settings it holds (`StudySettings`) and its own (`StudyOwnSettings`:
 * what it runs, where its outputs go, its gate and upkeep), as the specs
 * hold them, from the study file's keys and the flags (study/settings.ts).
 */
export interface Study extends StudySettings, StudyOwnSettings {
  /** The study file, or undefined for the built-in default study. */
  file?: string;
  /** The lists of the study file (or of the default study) the caller replaced (`--scenario`, `--policy`, `--model`), for the reports to say what ran. */
  fromCommandLine?: readonly StudyList[];
}

/** A study file's schema: every setting's key (study/settings.ts), each optional. */
const studySchema = z.strictObject(settingKeys());

/** A study file's keys, checked: those the checks below read by name. */
type StudyDoc = {
  model?: string;
  models?: readonly string[];
  route?: StudySettings['route'];
  fallback?: StudySettings['fallback'];
  judge?: string;
  upkeep?: { mode?: UpkeepMode };
  latency?: Readonly<Record<string, unknown>>;
  tokenFactor?: number | Readonly<Record<string, number>>;
};

/** Every key of a study file, in schema order (`STUDY_FILE_KEYS`, study/scenario-file.ts, holds the same, by which a study file is told from a scenario). */
export const STUDY_FILE_KEY_ORDER = Object.keys(studySchema.shape);

/** The JSON Schema of a study file: `schema/study.schema.json`. */
export function studyJsonSchema(): Record<string, unknown> {
  const entryWeight = weightSchema.optional().describe('what each conversation of this entry counts for in the per-policy means, in real conversations, times its own weight: a positive number, fractions allowed (0.5 counts half as much as 1; default 1)');
  const prefix = z.string().regex(/^[a-z0-9][a-z0-9-]*$/).describe('id prefix (ids are prefix-0001, …)');
  const generate = [...PROFILES.values()].map((p) =>
    z.strictObject({
      generate: z
        .strictObject({
          profile: z.literal(p.id),
          count: z.number().int().min(1).max(MAX_GENERATE_COUNT).describe('how many conversations'),
          seed: z.number().int().optional().describe('default: the study’s seed'),
          prefix: prefix.optional(),
          ...(p.overrides instanceof z.ZodObject ? p.overrides.shape : {}),
        })
        .describe(`generated conversations: ${p.describe}`),
      weight: entryWeight,
    }),
  );
  const imports = [...IMPORTERS.values()].map((i) =>
    z.strictObject({
      import: z
        .strictObject({
          format: z.literal(i.id),
          path: z.string().min(1).describe('the dataset, relative to the study file'),
          ...(i.options instanceof z.ZodObject ? i.options.shape : {}),
        })
        .describe(`an imported dataset: ${i.describe}`),
      weight: entryWeight,
    }),
  );
  const pattern = z.string().describe('a glob of scenario files (YAML or JSON), relative to the study file');
  const glob = z.strictObject({ glob: pattern, weight: entryWeight });
  const about = settingKeyDescriptions();
  const described = Object.fromEntries(Object.entries(studySchema.shape).map(([k, s]) => [k, s.describe(about[k]!)]));
  const file = studySchema
    .extend({
      ...described,
      scenarios: z.array(z.union([pattern, glob, ...generate, ...imports])).min(1).optional().describe(about.scenarios!),
      policies: z.array(policyEntrySchema(REGISTRY)).min(1).optional().describe(about.policies!),
    })
    .describe('What ctxsim runs: scenarios, memory policies, model, prices and where the reports go.');
  return fileJsonSchema(file, { file: 'study.schema.json', title: 'ctxsim study', durations: [DURATION] });
}

/** Every chat policy with its defaults, in registry order: the default study's policies. */
export function defaultPolicies(): PolicyVariant[] {
  return CHAT_POLICIES.flatMap((p) => resolveSpec(REGISTRY, p.id, []) as PolicyVariant[]);
}

/** The generated part of the default study: a small mix of every profile, kept fast. */
const DEFAULT_GENERATED: readonly [string, number, Record<string, unknown>][] = [
  ['support', 20, {}],
  ['voice-assistant', 5, {}],
  ['coding', 2, {}],
  ['companion', 1, { turns: [50, 100] }],
];

/** The output folder when neither a study nor the command line names one: `reports/` in the working folder (checked with `defaultOutFolder` where it is used). */
export const DEFAULT_OUT = 'reports';

/**
 * The chat models of a study that names none (the built-in default study's):
 * a study file's `model:` or `models:`, or `--model`, replaces the list, so
 * `modelsNamed` tells a model the user chose from the default.
 */
const DEFAULT_MODELS: readonly string[] = Object.freeze(['gpt-4o-mini']);

/** Whether the study's chat models are the user's (a study file or `--model` named them), not the default study's. */
export function modelsNamed(study: Pick<Study, 'models'>): boolean {
  return study.models !== DEFAULT_MODELS;
}

/**
 * The built-in default study: the shipped scenarios plus generated ones
 * (20 support, 5 voice-assistant, 2 coding, 1 companion chat), every
 * chat policy, builtin prices, `reports/`.
 */
export function defaultStudy(): Study {
  return {
    seed: 42,
    models: DEFAULT_MODELS,
    tokenizer: 'auto',
    prices: 'builtin',
    promptCache: 'auto',
    scenarios: [
      { kind: 'glob', pattern: 'scenarios/*.yaml', base: PACKAGE_DIR },
      ...DEFAULT_GENERATED.map(([profile, count, params]): GenerateSource => ({ kind: 'generate', profile, count, params })),
    ],
    policies: defaultPolicies(),
    out: resolve(DEFAULT_OUT),
  };
}

/**
 * The scenarios `ctxsim check-policy` replays a policy through when given
 * none: the default study's, and the package's contract scenarios
 * (`templates/contract/`: a fact forgotten and stated again, an injection,
 * an agent's turns of several tool rounds), so every rule of the contract
 * meets a conversation that can break it.
 */
export function contractScenarios(): ScenarioSource[] {
  return [...defaultStudy().scenarios, { kind: 'glob', pattern: 'templates/contract/*.yaml', base: PACKAGE_DIR }];
}

/**
 * What the caller sets over a study file (the command line's flags). Each
 * replaces the study's key, which is then neither checked nor used; only
 * here may the network be opened or a path outside the study's folder be
 * named (see `loadStudy`).
 */
export interface StudyOverrides {
  /** Run settings replacing the study's, as the flags give them (`--model`, `--prices`, …; paths absolute): the models the study names are checked against the price table given here. */
  settings?: Partial<StudySettings>;
  /** The output folder or file (absolute), or `-` (STDOUT), as `--out` is. */
  out?: string;
  /** The caller gives the policies (`--policy`): the study's list is not read, and no module it names is loaded. */
  policies?: boolean;
  /** Upkeep settings; `mode` `record` or `live` opens the network. */
  upkeep?: UpkeepOverrides;
  /** Seconds each policy module's import may take, as `--policy-timeout` says. */
  policyTimeout?: number;
  /** MB of heap (and as much outside it) each policy module's thread may use, as `--policy-memory` says. */
  policyMemory?: number;
}

/**
 * Reads a study file, with the policy modules it names (loading a module is
 * asynchronous); every problem is reported with its place. What `overrides`
 * sets replaces the study's keys.
 *
 * A study file reaches no further than the caller lets it (it may be
 * someone else's): its `upkeep.mode` may be `simulate` or `replay` but not `record` or
 * `live` (they send requests, with an API key, to its `baseURL`) unless
 * `overrides.upkeep.mode` says so too; and its `out`, its cassette and its
 * policy modules lie in its folder or below the working folder, symbolic
 * links followed (study/confine.ts), unless an override replaces them. Each
 * refusal is a problem at its key. Files it only reads (scenarios, datasets,
 * a price table, a baseline) may lie anywhere.
 */
export async function loadStudy(file: string, overrides: StudyOverrides = {}): Promise<Study> {
  const shown = displayPath(resolve(file));
  let text: string;
  try {
    text = readInputText(file, { shown });
  } catch (e) {
    throw new ScenarioError([{ file: shown, path: '', message: unreadableReason(e, 'study file') }]);
  }
  const src = SourceDoc.parse(shown, text);
  const root = src.value ?? {};
  if (root && typeof root === 'object' && !Array.isArray(root) && 'turns' in root && !('scenarios' in root) && !('policies' in root)) {
    throw new ScenarioError([src.problem([], 'this is a scenario file, not a study (it has turns): run it with ctxsim run --scenario FILE')]);
  }
  const problems: Problem[] = [];
  // The keys of the settings the caller replaces are neither checked nor read.
  const replacing = WRITTEN_SETTINGS.filter((s) => overrides.settings?.[s.name as keyof StudySettings] !== undefined);
  const replaced = new Set(replacing.flatMap(keysOf));
  const own = root && typeof root === 'object' && !Array.isArray(root) ? Object.fromEntries(Object.entries(root).filter(([k]) => !replaced.has(k))) : root;
  const doc = src.check(studySchema, own, [], problems) as StudyDoc | undefined;
  const dir = dirname(resolve(file));
  const roots = studyRoots(dir);
  const modules = overrides.policies ? new Map() : await studyModules(src, root, dir, roots, problems, moduleLoading(overrides));
  const base = defaultStudy();
  const study: Study = { ...base, file: resolve(file), out: resolve(dir, 'reports') };
  if (doc) {
    const read = readSettings(doc, dir);
    for (const p of read.problems) problems.push(src.problem(p.path, p.message));
    Object.assign(study, read.settings);
  }
  Object.assign(study, Object.fromEntries(replacing.map((s) => [s.name, overrides.settings![s.name as keyof StudySettings]])));
  if (overrides.out !== undefined) study.out = overrides.out;
  else if (study.out !== STDOUT) confined(src, ['out'], study.out, roots, problems, 'writes', '--out');
  const upkeep = studyUpkeepSettings(src, doc?.upkeep, study.upkeepSource, dir, roots, overrides.upkeep ?? {}, problems);
  if (upkeep) study.upkeepSource = upkeep;
  // Scenario and policy entries are checked even when another key is bad, so every problem is listed at once.
  const raw = (root && typeof root === 'object' ? root : {}) as { scenarios?: unknown; policies?: unknown };
  if (Array.isArray(raw.scenarios) && raw.scenarios.length) {
    study.scenarios = raw.scenarios.flatMap((entry, i): ScenarioSource[] => {
      if (typeof entry === 'string') return [{ kind: 'glob' as const, pattern: entry, base: dir, at: src.problem(['scenarios', i], '') }];
      const s = sourceEntry(src, entry, i, dir, problems);
      return s ? [s] : [];
    });
  }
  /** Each policy entry's variants, with the entry's index: where the models they name are written. */
  const entries: { i: number; variants: PolicyVariant[] }[] = [];
  if (Array.isArray(raw.policies) && raw.policies.length && !overrides.policies) {
    study.policies = raw.policies.flatMap((entry: unknown, i: number) => {
      // A module that could not be loaded is a problem already, at this entry.
      const name = entryName(entry);
      const request = name === undefined ? undefined : moduleRequest(name, dir);
      if (request && !modules.has(request.file)) return [];
      const r = policyEntry(entry, modules, dir);
      if (typeof r === 'string') {
        problems.push(src.problem(['policies', i], r));
        return [];
      }
      entries.push({ i, variants: r });
      return r;
    });
  }
  const firstEntry = new Map<string, number>();
  for (const { i, variants } of entries) {
    for (const v of variants) {
      const j = firstEntry.get(v.name);
      if (j === undefined) firstEntry.set(v.name, i);
      else problems.push(src.problem(['policies', i], `policy ${v.name} is listed twice (also policies[${j}]); its totals would count twice`));
    }
  }
  if (doc) problems.push(...modelListProblems(src, doc), ...modelProblems(src, doc, study.prices, replaced.has('prices'), entries, overrides.policies ? [] : raw.policies));
  if (problems.length) throw new ScenarioError([...problems, ...sourceProblems(study.scenarios)]);
  return study;
}

/**
 * The problems of a study's scenario sources, for a study that has problems
 * of its own: so that every problem of every file is reported at once, not
 * the study's first and its scenarios' on the next try.
 */
function sourceProblems(sources: readonly ScenarioSource[]): readonly Problem[] {
  try {
    loadScenarios(sources);
    return [];
  } catch (e) {
    if (e instanceof ScenarioError) return e.problems;
    return [];
  }
}

/** `model` and `models` together, and several models with `route` (which picks each turn's model itself). */
function modelListProblems(src: SourceDoc, doc: StudyDoc): Problem[] {
  if (!doc.models) return [];
  if (doc.model !== undefined) return [src.problem(['models'], 'give model or models, not both')];
  if (doc.route && doc.models.length > 1) return [src.problem(['models'], 'route picks each turn’s model (light or strong): give one model with route')];
  return [];
}

/**
 * Every model the study names — chat models, routed and fallback models, the
 * upkeep models of each policy variant, the keys of `latency` and of a
 * `tokenFactor` by model — checked against its price table,
 * each at the place the study names it, whether or not a call would use it.
 * A price table that cannot be read is named at the study's `prices` key,
 * or at `--prices` (`pricesFlag`) when that flag named it.
 */
function modelProblems(
  src: SourceDoc,
  doc: StudyDoc,
  prices: string,
  pricesFlag: boolean,
  entries: readonly { i: number; variants: PolicyVariant[] }[],
  rawPolicies: unknown,
): Problem[] {
  let table: PriceTable;
  try {
    table = loadPrices(prices);
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    // A file that cannot be read has no place of its own: the study's `prices` key is where it is named (unless --prices named it).
    if (pricesFlag) return [...e.problems];
    return e.problems.map((p) => (p.line === undefined && !p.path ? src.problem(['prices'], `price table ${p.file}: ${p.message}`) : p));
  }
  const out: Problem[] = [];
  const seen = new Set<string>();
  const check = (model: string, path: (string | number)[]) => {
    const key = `${model}\0${path.join('\0')}`;
    if (seen.has(key)) return;
    seen.add(key);
    try {
      lookup(table, model);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      out.push(src.problem(path, e.message));
    }
  };
  if (doc.model !== undefined) check(doc.model, ['model']);
  doc.models?.forEach((m, i) => check(m, ['models', i]));
  if (doc.route) {
    check(doc.route.light, ['route', 'light']);
    check(doc.route.strong, ['route', 'strong']);
  }
  if (doc.fallback) check(doc.fallback.model, ['fallback', 'model']);
  if (doc.judge !== undefined) check(doc.judge, ['judge']);
  // A setting by model names models too: one the price table lacks (a typo) would apply to nothing, silently.
  for (const key of ['latency', 'tokenFactor'] as const) {
    const byModel = doc[key];
    // `latency: {default: …}` is for every model, not a model's name.
    if (byModel && typeof byModel === 'object') for (const m of Object.keys(byModel)) if (!(key === 'latency' && m === 'default')) check(m, [key, m]);
  }
  const list = Array.isArray(rawPolicies) ? rawPolicies : [];
  for (const { i, variants } of entries) {
    const entry: unknown = list[i];
    const id = entry && typeof entry === 'object' && !Array.isArray(entry) ? Object.keys(entry)[0] : undefined;
    for (const v of variants) {
      for (const [k, val] of variantModels(v)) {
        const given = id !== undefined && typeof (entry as Record<string, unknown>)[id] === 'object' && k in ((entry as Record<string, object>)[id] ?? {});
        check(val, given ? ['policies', i, id, k] : ['policies', i]);
      }
    }
  }
  return out;
}

/** The upkeep models a variant names (`summaryModel`, `extractModel`, …), by parameter; a pipeline's are its stages'. */
function variantModels(v: PolicyVariant): [param: string, model: string][] {
  const own = Object.entries(v.params).filter((e): e is [string, string] => /Model$/.test(e[0]) && typeof e[1] === 'string');
  if (v.policy.id !== 'pipeline' || typeof v.params.stages !== 'string') return own;
  const stages = v.params.stages.split(STAGE_SEPARATOR).flatMap((stage) => {
    const s = parseSpecString(stage);
    const r = typeof s === 'string' ? s : resolveSpec(REGISTRY, s.id, s.given);
    return typeof r === 'string' ? [] : variantModels(r[0]!);
  });
  return [...own, ...stages];
}

/** The name a study's policy entry gives (`id`, `id:k=v`, `{id: {k: v}}`; the id may be a module's path). */
function entryName(entry: unknown): string | undefined {
  if (typeof entry === 'string') {
    const spec = parseSpecString(entry);
    return typeof spec === 'string' ? undefined : spec.id;
  }
  if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
    const keys = Object.keys(entry);
    return keys.length === 1 ? keys[0] : undefined;
  }
  return undefined;
}

/**
 * A study's upkeep settings (`own`, from its `upkeep:` key `doc`) with the
 * caller's overrides, or undefined when neither says anything. A `record`
 * or `live` mode that only the study gives is refused (the caller alone
 * opens the network), and so is a cassette outside `roots` that the run
 * would read or write and the caller does not replace: each a problem at
 * its key.
 */
function studyUpkeepSettings(
  src: SourceDoc,
  doc: { mode?: UpkeepMode } | undefined,
  own: UpkeepSettings | undefined,
  dir: string,
  roots: readonly string[],
  overrides: UpkeepOverrides,
  problems: Problem[],
): UpkeepSettings | undefined {
  const given = Object.values(overrides).some((v) => v !== undefined);
  if (!own && !given) return undefined;
  const u = withUpkeepOverrides(own ?? defaultUpkeep(dir), overrides);
  if (doc?.mode !== undefined && NETWORK_MODES.includes(doc.mode) && overrides.mode === undefined) problems.push(src.problem(['upkeep', 'mode'], networkProblem(u)));
  const cassette = u.mode === 'record' || u.mode === 'replay';
  if (cassette && overrides.cassette === undefined) {
    // The journal beside it too: a link in its place would lead the recording's writes out.
    if (confined(src, ['upkeep', 'cassette'], u.cassette, roots, problems, 'reads and writes its cassette', '--cassette')) confined(src, ['upkeep', 'cassette'], Journal.pathOf(u.cassette), roots, problems, 'reads and writes its cassette’s journal', '--cassette');
  }
  return u;
}

/** Checks `path`, a file the study names at `key` to write or load: a problem there when it lies outside `roots` (`flag` reaches outside instead); whether it lies inside. */
function confined(src: SourceDoc, key: (string | number)[], path: string, roots: readonly string[], problems: Problem[], what: string, flag: string): boolean {
  const outside = outsideProblem(path, roots, what, flag);
  if (outside) problems.push(src.problem(key, outside));
  return !outside;
}

/** The parameters an entry gives its policy, as `policyEntry` reads them (none when they are not a mapping). */
function entryGiven(entry: unknown): Given | undefined {
  if (typeof entry === 'string') {
    const spec = parseSpecString(entry);
    return typeof spec === 'string' ? undefined : spec.given;
  }
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
  const params = (entry as Record<string, unknown>)[Object.keys(entry)[0]!] ?? {};
  return typeof params === 'object' && !Array.isArray(params) ? Object.entries(params as object) : undefined;
}

/**
 * Loads the policy modules a study's entries name (paths relative to the
 * study file); one that cannot be loaded, or that lies outside `roots`
 * (then it is not loaded), is a problem at its entry.
 */
async function studyModules(src: SourceDoc, root: unknown, dir: string, roots: readonly string[], problems: Problem[], loading: ModuleLoading): Promise<PolicyModules> {
  const entries = root && typeof root === 'object' && Array.isArray((root as { policies?: unknown }).policies) ? ((root as { policies: unknown[] }).policies) : [];
  const at = new Map<string, number>();
  /** Modules outside `roots`: refused once, at their first entry, and never loaded. */
  const refused = new Set<string>();
  const requests = entries.flatMap((entry, i) => {
    const name = entryName(entry);
    const r = name === undefined ? undefined : moduleRequest(name, dir, entryGiven(entry));
    if (!r || refused.has(r.file)) return [];
    if (at.has(r.file)) return [r];
    at.set(r.file, i);
    const outside = outsideProblem(r.file, roots, 'loads policy modules', '--policy PATH');
    if (!outside) return [r];
    refused.add(r.file);
    problems.push(src.problem(['policies', i], `policy module ${r.shown}: ${outside}`));
    return [];
  });
  return loadPolicyModules(requests, (e, r) => problems.push(src.problem(['policies', at.get(r.file)!], e.message)), loading);
}

/** A study's policy entry: `id`, `id:k=v`, or `{id: {k: v}}`; the id may be a module's path, relative to the study's folder `dir`. */
function policyEntry(entry: unknown, modules: PolicyModules, dir: string): PolicyVariant[] | string {
  if (typeof entry === 'string') return resolveSpecString(entry, modules, dir);
  if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
    const keys = Object.keys(entry);
    if (keys.length !== 1) return `expected one policy id as the key, got ${keys.length} keys`;
    const id = keys[0]!;
    const params = (entry as Record<string, unknown>)[id] ?? {};
    // A policy made of policies (the pipeline) may be given as the list of its stages.
    if (Array.isArray(params) && REGISTRY.get(id)?.variants) return stagesEntry(id, params, modules, dir);
    if (typeof params !== 'object' || Array.isArray(params)) return `policy ${id}: expected a mapping of parameters`;
    return resolveNamed(id, Object.entries(params as object), modules, dir);
  }
  return `expected a policy id or {id: {parameter: value}}, got ${JSON.stringify(entry)}`;
}

/**
 * A pipeline written as a list of stages, each a policy entry (a spec, or
 * `{id: {parameter: value}}`; lists of values sweep): one pipeline variant
 * per combination of the stages' variants.
 */
function stagesEntry(id: string, stages: readonly unknown[], modules: PolicyModules, dir: string): PolicyVariant[] | string {
  if (!stages.length) return `${id}: expected at least one stage`;
  let combos: string[][] = [[]];
  for (const [i, stage] of stages.entries()) {
    const variants = policyEntry(stage, modules, dir);
    if (typeof variants === 'string') return `${id} stage ${i + 1}: ${variants}`;
    combos = combos.flatMap((c) => variants.map((v) => [...c, v.name]));
  }
  const out: PolicyVariant[] = [];
  for (const names of combos) {
    const r = resolveSpec(REGISTRY, id, [['stages', names.join(STAGE_SEPARATOR)]]);
    if (typeof r === 'string') return r;
    out.push(...r);
  }
  return out;
}

/**
 * A command-line policy spec such as `window-tokens:budget=2000`, or
 * `./keep-edges.mjs:keep=1` for a module among `modules` (see
 * `loadPolicyModules`; paths relative to the working folder).
 */
export function policyFromString(text: string, modules: PolicyModules = new Map()): PolicyVariant[] | string {
  return resolveSpecString(text, modules, process.cwd());
}

/**
 * Resolves `--policy` flags (modules loaded beforehand: `loadPolicyModules(specModules(specs))`); a bad one is a usage error.
 * With `prices`, the models each names (`summaryModel`, `extractModel`, …) are checked against it, so an unknown one names its flag.
 */
export function policiesFromFlags(specs: readonly string[], modules: PolicyModules = new Map(), prices?: PriceTable): PolicyVariant[] {
  const seen = new Map<string, string>();
  return specs.flatMap((s) => {
    const r = policyFromString(s, modules);
    if (typeof r === 'string') throw new UsageError(`--policy ${s}: ${r}`);
    for (const v of r) {
      const before = seen.get(v.name);
      if (before !== undefined) throw new UsageError(`--policy ${s}: policy ${v.name} is given twice (also --policy ${before}); its totals would count twice`);
      seen.set(v.name, s);
      if (!prices) continue;
      for (const [, model] of variantModels(v)) flagModel(prices, model, `--policy ${s}`);
    }
    return r;
  });
}

/** Looks up a model a flag names: an unknown one is a usage error that starts with the flag (`--model: unknown model "x" …`). */
export function flagModel(prices: PriceTable, model: string, flag: string): void {
  try {
    lookup(prices, model);
  } catch (e) {
    throw e instanceof UsageError ? new UsageError(`${flag}: ${e.message}`) : e;
  }
}

/**
 * Loads every scenario of the study, in a stable order (sources in the
 * order given; files sorted within a glob; generated and imported sets in
 * their own order); ids must be unique. Every problem of every source is
 * reported together, so a bad source never yields a partial set.
 */
export function loadScenarios(sources: readonly ScenarioSource[], opts: LoadOptions = {}): Conversation[] {
  const all = studyConversations(sources, opts);
  return Array.from({ length: all.length }, (_, i) => all.at(i));
}

/**
 * A study's conversations as a run takes them (`Conversations`), checked as
 * `loadScenarios` checks them, in its order: scenario files and imported
 * datasets are read here and held until `release`d; a generated set is only
 * numbered here (its ids, unique, and their places), each of its
 * conversations made when `at` asks for it, anew each time, so a generated
 * set of any size is never held whole.
 */
export interface StudyConversations extends Conversations {
  at(index: number): Conversation;
  /** A conversation's id, without making it (one let go has none). */
  id(index: number): string | undefined;
  /** Lets a conversation read from a file go (a generated one is never held); `at` must not ask for it again. */
  release(index: number): void;
  /** The conversations read from files (not generated), in study order, while they are held. */
  read(): Conversation[];
}

/** A generated conversation before it is made: its set and its number in it. */
class Unmade {
  constructor(
    readonly set: GeneratedSet,
    readonly k: number,
  ) {}
}

/** `loadScenarios`, the generated conversations made when asked for: see `StudyConversations`. */
export function studyConversations(sources: readonly ScenarioSource[], opts: LoadOptions = {}): StudyConversations {
  const out: (Conversation | Unmade | undefined)[] = [];
  /** id → where it was first seen. */
  const seen = new Map<string, Problem>();
  const problems: Problem[] = [];
  const keep = (id: string, at: Problem, c: Conversation | Unmade) => {
    const prev = seen.get(id);
    if (prev !== undefined) {
      problems.push({ ...at, message: `duplicate scenario id "${id}" (also at ${placeOf(prev, at.file)})` });
      return;
    }
    seen.set(id, at);
    opts.onPlace?.(id, at);
    out.push(c);
  };
  for (const s of sources) {
    try {
      if (s.kind === 'generate') {
        // A generated conversation's id is placed at its study entry, or at its own name.
        const set = generatedSet(s, opts);
        for (let k = 1; k <= set.count; k++) {
          const id = set.id(k);
          keep(id, s.at ?? { file: set.source(id), path: 'id', message: '' }, new Unmade(set, k));
        }
        continue;
      }
      if (s.kind === 'import') {
        for (const c of loadSource(s, opts, displayPath)) keep(c.id, s.at ?? { file: c.source, path: 'id', message: '' }, weighted(c, s.weight));
        continue;
      }
      const issue = globIssue(s.pattern);
      if (issue !== undefined) {
        if (s.at) problems.push({ ...s.at, message: issue });
        else throw new UsageError(`--scenario ${s.pattern}: ${issue}`);
        continue;
      }
      // A folder (or nothing: the study's own folder) is not a scenario file: its files are named by a glob.
      const folder = !isGlob(s.pattern) && isFolder(resolve(s.base, s.pattern));
      const files = folder ? [] : scenarioFiles(s.pattern, s.base);
      if (!files.length) {
        const blank = !s.pattern.trim();
        const reason = blank ? `expected a scenario file or a glob such as scenarios/*.yaml, got ${JSON.stringify(s.pattern)}` : folder ? `is a folder; name its scenario files with a glob: ${s.pattern.replace(/[\\/]+$/, '')}/*.yaml` : 'no scenario file matches';
        if (!s.at) throw new UsageError(`--scenario${blank ? '' : ` ${s.pattern}`}: ${reason}`);
        problems.push({ ...s.at, message: blank ? reason : folder ? `${s.pattern} ${reason}` : `no scenario file matches "${s.pattern}"` });
        continue;
      }
      for (const f of files) {
        const { conversation, idAt } = loadScenarioPlaced(f, displayPath(f));
        keep(conversation.id, idAt, weighted(conversation, s.weight));
      }
    } catch (e) {
      if (!(e instanceof ScenarioError)) throw e;
      problems.push(...e.problems);
    }
  }
  if (problems.length) throw new ScenarioError(problems);
  return {
    length: out.length,
    at(i) {
      const c = out[i];
      if (c === undefined) throw new RangeError(`conversation ${i} was let go, or is not there`);
      return c instanceof Unmade ? c.set.make(c.k) : c;
    },
    id(i) {
      const c = out[i];
      return c instanceof Unmade ? c.set.id(c.k) : c?.id;
    },
    release(i) {
      if (!(out[i] instanceof Unmade)) out[i] = undefined;
    },
    read: () => out.filter((c): c is Conversation => c !== undefined && !(c instanceof Unmade)),
  };
}

/** A problem's place as `file:line:col` (`line L, column C` in the file `here`), or the file and path when it has no line. */
function placeOf(p: Problem, here: string): string {
  if (p.line === undefined) return `${p.file}${p.path ? ` ${p.path}` : ''}`;
  return p.file === here ? `line ${p.line}, column ${p.column ?? 1}` : `${p.file}:${p.line}:${p.column ?? 1}`;
}

/**
 * The most runs of `*` one part of a glob's path may hold. The matcher
 * (picomatch) makes each a lazy repetition and backtracks over them all: a
 * file name of 200 characters takes about a second against four runs,
 * minutes against five, and a study (or a pull request) may ship such names.
 */
const MAX_GLOB_STARS = 3;

/**
 * Why a scenario glob is refused before anything is matched, or undefined:
 * a part of its path with more than `MAX_GLOB_STARS` runs of `*` (`**` is
 * one). Extended globs (`+(…)`, `*(…)`), which repeat a repetition, are not
 * read (`scenarioFiles`).
 */
function globIssue(pattern: string): string | undefined {
  for (const part of pattern.split('/')) {
    const stars = part.match(/\*+/g)?.length ?? 0;
    if (stars > MAX_GLOB_STARS) return `${stars} wildcards (*) in one part of the glob, ${JSON.stringify(part)}: at most ${MAX_GLOB_STARS} (matching more against a long file name can take hours)`;
  }
  return undefined;
}

/**
 * Throws a problem found after the study file was loaded (its `out` cannot
 * be written, its `answers` cannot be measured) at the key `path` of that
 * file, with its line and column: `reason` is the message.
 */
export function failAtStudyKey(file: string, path: readonly (string | number)[]): (reason: string) => never {
  return (reason) => {
    const shown = displayPath(file);
    throw new ScenarioError([SourceDoc.parse(shown, readInputText(file, { shown })).problem(path, reason)]);
  };
}

/**
 * The files a run of the study reads, absolute: the study file, its price
 * table, its scenario files and datasets (with their side files), the
 * upkeep cassette it replays or records into. No output of the run may
 * replace one (cli/_output.ts: `refuseInput`).
 */
export function studyInputs(study: Study): string[] {
  const files: string[] = study.file ? [study.file] : [];
  if (study.prices !== 'builtin') files.push(resolve(study.prices));
  for (const s of study.scenarios) {
    // A glob `globIssue` refuses is refused at its place when the conversations are loaded.
    if (s.kind === 'glob' && globIssue(s.pattern) === undefined) files.push(...scenarioFiles(s.pattern, s.base));
    else if (s.kind === 'import') files.push(s.path, ...(s.files ?? []).map((f) => f.path));
  }
  const u = study.upkeepSource;
  if (u && (u.mode === 'record' || u.mode === 'replay')) files.push(u.cassette);
  return files;
}

/** Whether a scenario entry is a glob (holds a character a glob reads), not a path. */
const isGlob = (pattern: string) => /[*?[{]/.test(pattern);

/** Whether a folder is at `path`. */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The scenario files a glob matches (relative to `base`), sorted; a path without glob characters that exists is itself. A glob `globIssue` refuses is a usage error. */
export function scenarioFiles(pattern: string, base: string): string[] {
  const direct = resolve(base, pattern);
  if (existsSync(direct) && !isGlob(pattern)) return [direct];
  const issue = globIssue(pattern);
  if (issue !== undefined) throw new UsageError(`${pattern}: ${issue}`);
  // No extended globs: `+(*a)` repeats a repetition, and backtracks as many wildcards do.
  return globSync(pattern, { cwd: base, absolute: true, onlyFiles: true, extglob: false })
    .filter((f) => /\.(ya?ml|json)$/i.test(f))
    .sort();
}
