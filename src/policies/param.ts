import { boolean, choice, duration, int, model, number, probability } from './params.js';

/**
 * The parameter builders of `definePolicy`, under one name: each returns a zod
 * schema that carries its default, bounds and description, from which
 * parsing, error messages, the docs and the JSON Schema are derived.
 *
 * @example
 * definePolicy({ id: 'keep-edges', describe: '…', params: z.object({ keep: param.int({ default: 1, min: 0, describe: 'exchanges kept at each end' }) }), start … })
 */
export const param = { int, number, probability, boolean, choice, duration, model } as const;
