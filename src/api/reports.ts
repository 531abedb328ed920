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
export { budgetCsv } from '../report/budget.js';
export { policyTable, runSummary, TABLE_SORTS, type TableOptions, type TableSort } from '../report/text.js';
export { DEFAULT_MIN_RETENTION, verdict } from '../report/verdict.js';
export { pricesTable, type Counting } from '../report/prices.js';
