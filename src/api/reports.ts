/**
 * `ctxsim/reports`: reports as strings and bytes, written nowhere — every
 * file of an output folder, one output, charts, markdown, HTML, the run
 * table and its verdict, the prices table.
 *
 * @packageDocumentation
 * @module ctxsim/reports
 */

export { reportFiles, reportOnlyFiles, reportOutput, singleOutput, type OutputFormat, type ReportFilesOptions } from '../report/outputs.js';
export { charts, type Chart } from '../report/charts.js';
export { specJson } from '../report/spec-json.js';
export { budgetMarkdown, reportMarkdown } from '../report/markdown.js';
export { reportHtml } from '../report/html.js';
export { BUDGET_COLUMN_NAMES, budgetCsv, type BudgetOptions } from '../report/budget.js';
export { policyTable, runSummary, type TableOptions } from '../report/text.js';
export { TABLE_SORTS, type TableSort } from '../records/table-sort.js';
export { DEFAULT_MIN_RETENTION, DEFAULT_MIN_SAVING, verdict, type VerdictScenario } from '../report/verdict.js';
export { pricesTable, type Counting } from '../report/prices.js';
