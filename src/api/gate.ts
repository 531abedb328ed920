/**
 * `ctxsim/gate`: the CI gate's reports (markdown, JUnit, JSON, GitHub
 * annotations, the step summary and the pull request comment), the sink
 * that writes them, the limits a check applies, and the types of a
 * comparison's rows and causes. The root export has `makeBaseline`, `readBaseline`, `baselineJson`,
 * `compare` and `DEFAULT_LIMITS`.
 *
 * @packageDocumentation
 * @module ctxsim/gate
 */

export type { BaselineRow } from '../gate/baseline.js';
export type { Cause, Change, LostFact, PolicyComparison, RowComparison, Verdict } from '../gate/compare.js';
export { appliedLimits, limitsOfWords, studyLimits, type LimitsText, type RetentionLimit } from '../gate/limits.js';
export { gateAnnotations, gateJson, gateJunit, gateMarkdown, type AnnotationPlaces, type GateReportOptions, type Place, type Placer } from '../report/gate.js';
export { gateComment, gateSummary, type GatePageOptions } from '../report/gate-summary.js';
export { gateSink } from '../output/sinks.js';
