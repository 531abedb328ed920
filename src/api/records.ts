/**
 * `ctxsim/records`: the record files (CSV, results.json) as strings, money
 * and ratios as text, the report info, and the types of the records'
 * fields. The root export has the record types, `parseResultsJson` and
 * `usd`.
 *
 * @packageDocumentation
 * @module ctxsim/records
 */

export { policiesCsv, probesCsv, summaryCsv, turnsCsv, violationsCsv } from '../records/csv.js';
export { resultsJson, type ResultsMeta } from '../records/json.js';
export { dollars, percent } from '../records/format.js';
export type { ModelInfo, PolicyInfo, ReportInfo, ScenarioInfo } from '../records/info.js';
export type { Reported } from '../records/digest.js';
export type { MemoryKind, Pico, ProbeAnswer, ProbeExpectation, ProbeOutcome, ProbeSource, UpkeepCall } from '../types.js';
