import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './_shared.js';

/**
 * The package's entry points: a small root (`ctxsim`) and one sub-path per
 * concern (`ctxsim/policies`, …). Each is in package.json's exports, in
 * TypeDoc's entry points and in docs/api.md's table, and no name is exported
 * by two of them. That every sub-path resolves from the packed package is in
 * package-install.test.ts.
 */

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string; import: string }> };

/** The module entry points of package.json's exports (not plain files such as the schemas): the specifier and its source file. */
const ENTRIES = Object.entries(pkg.exports).flatMap(([key, target]) =>
  typeof target === 'object' ? [{ specifier: key === '.' ? 'ctxsim' : `ctxsim/${key.slice(2)}`, source: target.import.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts') }] : [],
);

/** What the root exports today; a name added to it is a decision about the public API, made here. */
const ROOT_NAMES = [
  // errors
  'CtxsimError', 'Problem', 'ScenarioError', 'UsageError', 'formatProblem',
  // run a study
  'KeptResults', 'PipelineOptions', 'RunnableStudy', 'StudyOutcome', 'StudySink', 'digestSink', 'folderSink', 'memorySink', 'runStudyPipeline',
  // load studies and scenarios
  'ScenarioSource', 'Study', 'StudyOverrides', 'contractScenarios', 'defaultStudy', 'loadScenarioFile', 'loadScenarios', 'loadStudy', 'policyFromString',
  // define and check a policy
  'CommonParams', 'ContractViolation', 'POLICIES', 'Policy', 'PolicySession', 'PolicyVariant', 'PromptPlan', 'checkPolicyContract', 'definePolicy', 'formatContractViolation', 'param',
  // read results
  'Conversation', 'Message', 'PolicyRecord', 'ProbeRecord', 'Results', 'ResultsDocument', 'SummaryRecord', 'TurnRecord', 'ViolationRecord', 'parseResultsJson', 'usd',
  // gate
  'Baseline', 'DEFAULT_LIMITS', 'GateLimits', 'GateResult', 'StudyFingerprint', 'baselineJson', 'compare', 'makeBaseline', 'readBaseline',
];

/** Each entry point's exported names (values and types), sorted, by specifier. */
let names: Map<string, string[]>;

beforeAll(() => {
  const files = ENTRIES.map((e) => join(ROOT, e.source));
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, resolveJsonModule: true });
  const checker = program.getTypeChecker();
  names = new Map(
    ENTRIES.map((e, i) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(files[i]!)!)!;
      return [e.specifier, checker.getExportsOfModule(module).map((s) => s.name).sort()];
    }),
  );
});

describe('the package entry points', () => {
  it('are the root and ten sub-paths, each a file of src/api/', () => {
    expect(ENTRIES.map((e) => e.specifier)).toEqual(['ctxsim', 'ctxsim/study', 'ctxsim/engine', 'ctxsim/scenarios', 'ctxsim/policies', 'ctxsim/upkeep', 'ctxsim/tokens', 'ctxsim/pricing', 'ctxsim/records', 'ctxsim/reports', 'ctxsim/gate']);
    expect(ENTRIES[0]!.source).toBe('src/index.ts');
    for (const e of ENTRIES.slice(1)) expect(e.source).toBe(`src/api/${e.specifier.slice('ctxsim/'.length)}.ts`);
    for (const target of Object.values(pkg.exports)) if (typeof target === 'object') expect(target.types).toBe(target.import.replace(/\.js$/, '.d.ts'));
  });

  it('the root is small: the names a user of the library needs, at most 60', () => {
    const root = names.get('ctxsim')!;
    expect(root).toEqual([...ROOT_NAMES].sort());
    // The ceiling a name added to the list above must still keep.
    expect(ROOT_NAMES.length).toBeLessThanOrEqual(60);
  });

  it('every sub-path exports something, and no name is exported by two entry points', () => {
    for (const [specifier, list] of names) expect(list.length, specifier).toBeGreaterThan(0);
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [specifier, list] of names) {
      for (const name of list) {
        if (seen.has(name)) twice.push(`${name}: ${seen.get(name)}, ${specifier}`);
        seen.set(name, specifier);
      }
    }
    expect(twice).toEqual([]);
  });

  it('each is a TypeDoc entry point, named by its specifier', () => {
    const typedoc = JSON.parse(readFileSync(join(ROOT, 'typedoc.json'), 'utf8')) as { entryPoints: string[] };
    expect(typedoc.entryPoints).toEqual(ENTRIES.map((e) => e.source));
    for (const e of ENTRIES) expect(readFileSync(join(ROOT, e.source), 'utf8'), e.source).toContain(`@module ${e.specifier}\n`);
  });

  it('each has a row in docs/api.md’s table', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(ctxsim[\w/]*)` \|/gm)].map((m) => m[1]);
    expect(rows).toEqual(ENTRIES.map((e) => e.specifier));
  });
});
