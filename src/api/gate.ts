/**
 * `ctxsim/gate`: the CI gate's reports (markdown, JUnit, JSON, GitHub
 * annotations), the sink that writes them, and the types of a comparison's
 * rows. The root export has `makeBaseline`, `readBaseline`, `baselineJson`,
 * `compare` and `DEFAULT_LIMITS`.
 *
 * @packageDocumentation
 * @module ctxsim/gate
 */

export type { BaselineRow } from '../gate/baseline.js';
export type { LostFact, PolicyComparison, RetentionLimit, RowComparison, Verdict } from '../gate/compare.js';
export { gateAnnotations, gateJson, gateJunit, gateMarkdown } from '../report/gate.js';
export { gateSink } from '../study/sinks.js';
