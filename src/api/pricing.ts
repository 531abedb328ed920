/**
 * `ctxsim/pricing`: what a provider charges and allows — price tables, a
 * model's price, cost settings, and the provider message rules a prompt is
 * checked against.
 *
 * @packageDocumentation
 * @module ctxsim/pricing
 */

export { builtinPrices, loadPrices } from '../pricing/load.js';
export { lookup, type ModelPrice, type PriceTable } from '../pricing/prices.js';
export type { CallCost } from '../pricing/meter.js';
export type { CostSettings } from '../pricing/settings.js';
export { checkPrompt, type RuleSet, type Violation } from '../message-rules/provider.js';
