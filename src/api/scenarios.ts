/**
 * `ctxsim/scenarios`: scenarios beyond loading them (the root export has
 * `loadScenarios` and `loadScenarioFile`) — parse one from text, generate,
 * import datasets, write YAML, the JSON Schema — and the types a
 * conversation is made of.
 *
 * @packageDocumentation
 * @module ctxsim/scenarios
 */

export type { GenerateSource, GlobSource, ImportSource, LoadOptions } from '../study/study.js';
export { parseScenario } from '../study/scenario-file.js';
export { generateConversations, generateDocs, PROFILES, type GenerateRequest, type Profile } from '../scenario/generate/index.js';
export { formatImportReport, IMPORTERS, importDataset, type Imported, type ImportInput, type Importer, type ImportReport, type ImportResult, type Quirk, type RecordedModel } from '../scenario/import/index.js';
export { scenarioToYaml, scenariosToYamlStream } from '../scenario/yaml.js';
export type { ScenarioOut } from '../scenario/docs.js';
export { scenarioJsonSchema } from '../scenario/schema.js';
export type { BilledCall, BilledTotal, ForgetEvent, Origin, Role, ToolCall, ToolDef, Turn } from '../types.js';
