import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './_shared.js';

/**
 * The package's entry points: a small root (`ctxsim`) and one sub-path per
 * concern (`ctxsim/policies`, …). Each is in package.json's exports, in
 * TypeDoc's entry points and in docs/api.md's table, exports exactly the
 * names pinned below, and no name is exported by two of them. That every
 * sub-path resolves from the packed package is in package-install.test.ts;
 * that its declarations compile for a strict consumer, in
 * scripts/check-consumer.mjs.
 */

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string; import: string }> };

/** The module entry points of package.json's exports (not plain files such as the schemas): the specifier and its source file. */
const ENTRIES = Object.entries(pkg.exports).flatMap(([key, target]) =>
  typeof target === 'object' ? [{ specifier: key === '.' ? 'ctxsim' : `ctxsim/${key.slice(2)}`, source: target.import.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts') }] : [],
);

/**
 * The public surface: every name each entry point exports, in one place.
 * A name added to an entry (or taken out of one) fails the test below until
 * it is written here too: growing the API is a decision, made in this list
 * (ARCHITECTURE.md, "The public surface"), and said in CHANGELOG.md. A name
 * a user of the library never calls (a protocol between ctxsim's own parts)
 * is not exported from an entry at all: its layer exports it, and the CLI
 * and the tests import it from there.
 */
const PUBLIC: Record<string, readonly string[]> = {
  ctxsim: [
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
  ],
  'ctxsim/study': [
    'studyJsonSchema',
    // the pipeline's events and what a sink is told
    'SinkOutcome', 'StudyDone', 'StudyEvents', 'StudyRecords', 'resultsMeta',
    // sinks, shards, staged outputs
    'ReportedResults', 'fileSink', 'shardSink', 'textSink', 'mergeShardFiles', 'OutputSet',
    // a study's upkeep as a run takes it
    'RunUpkeepOf', 'studyUpkeep',
  ],
  'ctxsim/engine': [
    // runs and their sinks
    'ListSink', 'RecordLists', 'RecordSink', 'RunInfo', 'RunModel', 'RunResults', 'ScenarioRecordLists', 'ScenarioRecords', 'runStudy', 'streamStudy', 'runStudyParallel', 'streamStudyParallel',
    // a run's options
    'Conversations', 'Execution', 'RUN_SPEC', 'RunOptions', 'RunSpec', 'RunUpkeep', 'RunWork',
    // one conversation
    'ModelContext', 'OnCall', 'OnUpkeep', 'Replay', 'ReplayContext', 'SentCall', 'UpkeepPrice', 'replay', 'replayContext',
    // rows from records
    'byPolicy', 'summaryOf',
  ],
  'ctxsim/scenarios': [
    // sources, parse, generate, import, write
    'GenerateSource', 'GlobSource', 'ImportSource', 'LoadOptions', 'parseScenario',
    'GenerateRequest', 'PROFILES', 'Profile', 'generateConversations', 'generateDocs',
    'IMPORTERS', 'ImportInput', 'ImportReport', 'ImportResult', 'Imported', 'Importer', 'Quirk', 'RecordedModel', 'formatImportReport', 'importDataset',
    'ScenarioOut', 'scenarioJsonSchema', 'scenarioToYaml', 'scenariosToYamlStream',
    // the parts of a conversation
    'BilledCall', 'BilledTotal', 'ForgetEvent', 'Origin', 'Role', 'ToolCall', 'ToolDef', 'Turn',
  ],
  'ctxsim/policies': [
    // the registry, specs, policy modules
    'AGENT_POLICIES', 'CHAT_POLICIES', 'REGISTRY', 'canonicalName', 'resolveSpec', 'policiesFromFlags',
    'Given', 'ModuleLoadOptions', 'ModuleLoading', 'ModuleRequest', 'PolicyModule', 'PolicyModules', 'isPolicyPath', 'loadPolicyModule', 'loadPolicyModules', 'specModules',
    // the types a policy works with, its parameters, its building blocks
    'Artifact', 'ArtifactKind', 'Blocks', 'Exchange', 'FactSheetBlock', 'ForgetFact', 'ForgetInfo', 'History', 'PolicyDeps', 'RunningSummaryBlock', 'SessionStart', 'ToolView', 'TranscriptBlock', 'TurnInfo', 'TurnStart', 'blocks',
    'COMMON_PARAMS', 'FactSheetParams', 'ParamSpec', 'ParamTable', 'ParamValue', 'Params', 'PolicyParams', 'SessionParams', 'SummaryParams', 'paramsFromTable',
    // checkPolicyContract's options and rules
    'ContractOptions', 'ContractRule',
  ],
  'ctxsim/upkeep': [
    // a study's upkeep settings
    'UPKEEP_MODES', 'UpkeepMode', 'UpkeepOverrides', 'UpkeepPlan', 'UpkeepSettings', 'defaultUpkeep', 'planText', 'upkeepPlan',
    // simulated, recorded, live; the cassette; the prompts
    'CassetteMissError', 'Miss', 'MissHandler', 'RecordedOptions', 'Upkeep', 'recordedUpkeep', 'simulatedUpkeep',
    'BilledUsage', 'Cassette', 'CassetteEntry', 'ChatMessage', 'UpkeepRequest', 'requestKey', 'DEFAULT_PROMPTS', 'UpkeepPrompts',
    // the summarizer's, extractor's and vector store's types
    'ExtractRequest', 'Fact', 'ForgetSummaryRequest', 'Hit', 'Injected', 'Stored', 'SummarizeRequest', 'Summary', 'Vector', 'VectorStore',
    // check-upkeep
    'CHECK_UPKEEP_FORMATS', 'CheckUpkeepOptions', 'ConversationUpkeepCheck', 'SimulateOptions', 'SimulatedMemory', 'UpkeepBudgets', 'UpkeepCase', 'UpkeepCheck', 'UpkeepCheckTotal', 'UpkeepDialogue', 'UpkeepShares',
    'checkUpkeep', 'judgeUpkeep', 'memoryEntries', 'readUpkeepCases', 'simulateMemory', 'upkeepCheckReport',
    'answerKeyWords', 'answerWords', 'holdsAnswer', 'memoryWords',
  ],
  'ctxsim/tokens': [
    'TokenCounter', 'messageText', 'openTokenCounter',
    'EncodingName', 'ResolvedEncoding', 'TOKENIZERS', 'TextCounter', 'TokenFactor', 'TokenizerName', 'encodingForModel', 'textCounter',
    'OPEN_WEIGHTS', 'OpenWeightName', 'OpenWeightSource',
    // calibration
    'CalibrateOptions', 'Calibration', 'CalibrationCall', 'CalibrationError', 'LeftOut', 'ModelCalibration', 'SkippedTranscript', 'calibrateTokenFactor', 'calibrationReport', 'tokenFactorLine',
  ],
  'ctxsim/pricing': ['CallCost', 'CostSettings', 'ModelPrice', 'PriceTable', 'builtinPrices', 'loadPrices', 'lookup', 'RuleSet', 'Violation', 'checkPrompt'],
  'ctxsim/records': [
    'policiesCsv', 'probesCsv', 'summaryCsv', 'turnsCsv', 'violationsCsv', 'ResultsMeta', 'resultsJson', 'dollars', 'percent',
    'ModelInfo', 'PolicyInfo', 'ReportInfo', 'ScenarioInfo', 'Reported',
    'MemoryKind', 'Pico', 'ProbeAnswer', 'ProbeExpectation', 'ProbeOutcome', 'ProbeSource', 'UpkeepCall',
  ],
  'ctxsim/reports': [
    'OutputFormat', 'ReportFilesOptions', 'reportFiles', 'reportOnlyFiles', 'reportOutput', 'singleOutput',
    'Chart', 'charts', 'specJson', 'budgetMarkdown', 'reportMarkdown', 'reportHtml', 'BUDGET_COLUMN_NAMES', 'BudgetOptions', 'budgetCsv',
    'TableOptions', 'policyTable', 'runSummary', 'TABLE_SORTS', 'TableSort',
    'DEFAULT_MIN_RETENTION', 'DEFAULT_MIN_SAVING', 'VerdictScenario', 'verdict', 'Counting', 'pricesTable',
  ],
  'ctxsim/gate': [
    'BaselineRow', 'Cause', 'Change', 'LostFact', 'PolicyComparison', 'RetentionLimit', 'RowComparison', 'Verdict',
    'LimitsText', 'appliedLimits', 'limitsOfWords', 'studyLimits',
    'AnnotationPlaces', 'GateReportOptions', 'Place', 'Placer', 'gateAnnotations', 'gateJson', 'gateJunit', 'gateMarkdown', 'GatePageOptions', 'gateComment', 'gateSummary', 'gateSink',
  ],
};

/** The public names on their way out: each declared `@deprecated`, its doc comment naming what replaces it (CHANGELOG.md says so too). */
const DEPRECATED = ['ParamSpec', 'ParamTable', 'paramsFromTable'];

/** An exported name's doc tags and their text: those of its declarations (a re-export followed to what it names) and of the export statement itself. */
interface Exported {
  name: string;
  tags: Map<string, string>;
}

/** Each entry point's exported names (values and types), sorted, by specifier. */
let exported: Map<string, Exported[]>;
let names: Map<string, string[]>;

beforeAll(() => {
  const files = ENTRIES.map((e) => join(ROOT, e.source));
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, noEmit: true, resolveJsonModule: true });
  const checker = program.getTypeChecker();
  const tagsOf = (symbol: ts.Symbol): Map<string, string> => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const statements = (symbol.declarations ?? []).flatMap((d) => (ts.isExportSpecifier(d) ? [d.parent.parent] : []));
    const tags = [...(target.declarations ?? []), ...statements].flatMap((d) => ts.getJSDocTags(d));
    return new Map(tags.map((t) => [t.tagName.text, ts.getTextOfJSDocComment(t.comment) ?? '']));
  };
  exported = new Map(
    ENTRIES.map((e, i) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(files[i]!)!)!;
      const list = checker.getExportsOfModule(module).map((s) => ({ name: s.name, tags: tagsOf(s) }));
      return [e.specifier, list.sort((a, b) => (a.name < b.name ? -1 : 1))];
    }),
  );
  names = new Map([...exported].map(([specifier, list]) => [specifier, list.map((x) => x.name)]));
});

describe('the package entry points', () => {
  it('are the root and ten sub-paths, each a file of src/api/', () => {
    expect(ENTRIES.map((e) => e.specifier)).toEqual(['ctxsim', 'ctxsim/study', 'ctxsim/engine', 'ctxsim/scenarios', 'ctxsim/policies', 'ctxsim/upkeep', 'ctxsim/tokens', 'ctxsim/pricing', 'ctxsim/records', 'ctxsim/reports', 'ctxsim/gate']);
    expect(ENTRIES[0]!.source).toBe('src/index.ts');
    for (const e of ENTRIES.slice(1)) expect(e.source).toBe(`src/api/${e.specifier.slice('ctxsim/'.length)}.ts`);
    for (const target of Object.values(pkg.exports)) if (typeof target === 'object') expect(target.types).toBe(target.import.replace(/\.js$/, '.d.ts'));
  });

  it('each exports the names of its list, no more and no fewer: a name is added to the public API on purpose', () => {
    expect(Object.keys(PUBLIC)).toEqual(ENTRIES.map((e) => e.specifier));
    for (const [specifier, list] of names) {
      const pinned = [...PUBLIC[specifier]!].sort();
      expect(new Set(pinned).size, `${specifier}: a name listed twice in PUBLIC`).toBe(pinned.length);
      const added = list.filter((n) => !pinned.includes(n));
      const gone = pinned.filter((n) => !list.includes(n));
      expect(
        { added, gone },
        `${specifier} exports other names than PUBLIC in test/api-entries.test.ts lists: a name added to (or taken from) the public API is listed there on purpose, and said in CHANGELOG.md`,
      ).toEqual({ added: [], gone: [] });
    }
  });

  it('the root is small: the names a user of the library needs, at most 60', () => {
    // The ceiling a name added to the root's list must still keep.
    expect(PUBLIC.ctxsim!.length).toBeLessThanOrEqual(60);
  });

  it('export no @internal name (stripped from the declarations, it would leave an entry naming what is not there), and deprecate only on purpose', () => {
    const internal = [...exported].flatMap(([specifier, list]) => list.filter((x) => x.tags.has('internal')).map((x) => `${specifier}: ${x.name}`));
    expect(internal).toEqual([]);
    const deprecated = [...exported].flatMap(([, list]) => list.filter((x) => x.tags.has('deprecated')));
    expect(deprecated.map((x) => x.name).sort()).toEqual([...DEPRECATED].sort());
    // Each says what to use instead: the parameter builders, with definePolicy.
    for (const x of deprecated) expect(x.tags.get('deprecated'), x.name).toMatch(/`param`\s+builders?[\s\S]*`definePolicy`/);
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
