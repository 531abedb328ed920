import { z } from 'zod';
import { descriptionOf, valueOf } from '../../text/zod.js';
import type { Importer } from './types.js';

/** How an importer option is written on the command line: text, on or off, a number, or text given any number of times. */
export type ImportOptionKind = 'string' | 'boolean' | 'number' | 'strings';

/** One format's declaration of an option: its description and its default. */
export interface ImportOptionUse {
  format: string;
  describe: string;
  /** Its default, when the schema has one. */
  default?: unknown;
}

/** An option some importers take: its key, kind and allowed values, and each format's declaration of it. */
export interface ImportOption {
  /** As a study's `import:` entry writes it (`factValue`). */
  key: string;
  kind: ImportOptionKind;
  /** The values it allows, when it is one of several. */
  choices?: readonly string[];
  /** The formats that take it, in the order they are given. */
  uses: ImportOptionUse[];
}

/**
 * Every option of the importers, read from their option schemas, in order
 * of first appearance (importers in the order given). One flag carries an
 * option for every format that takes it, so options of one name must agree
 * on kind and allowed values. Throws (a bug in an importer, not bad input)
 * on a clash, an option without a description, or one the command line
 * cannot write.
 */
export function importOptions(importers: Iterable<Importer>): ImportOption[] {
  const byKey = new Map<string, ImportOption>();
  for (const importer of importers) {
    if (!(importer.options instanceof z.ZodObject)) throw new Error(`import format ${importer.id}: its options are not an object schema`);
    for (const [key, schema] of Object.entries(importer.options.shape as Record<string, z.ZodType>)) {
      const where = `import format ${importer.id}, option ${key}`;
      const { kind, choices } = kindOf(schema, where);
      const describe = descriptionOf(schema);
      if (describe === undefined) throw new Error(`${where}: no description (.describe() on its schema)`);
      const parsed = schema.safeParse(undefined);
      const use: ImportOptionUse = { format: importer.id, describe, ...(parsed.success && parsed.data !== undefined && { default: parsed.data }) };
      const known = byKey.get(key);
      if (!known) byKey.set(key, { key, kind, ...(choices && { choices }), uses: [use] });
      else if (typeName(known) !== typeName({ kind, choices })) {
        throw new Error(`import option ${key}: ${typeName(known)} in ${known.uses[0]!.format} but ${typeName({ kind, choices })} in ${importer.id}; one flag carries it, so they must agree`);
      } else known.uses.push(use);
    }
  }
  return [...byKey.values()];
}

/** The kind and allowed values as words, to compare and to show. */
function typeName({ kind, choices }: Pick<ImportOption, 'kind' | 'choices'>): string {
  return choices ? `one of ${choices.join('|')}` : kind;
}

function kindOf(schema: z.ZodType, where: string): { kind: ImportOptionKind; choices?: readonly string[] } {
  const value = valueOf(schema);
  if (value instanceof z.ZodString) return { kind: 'string' };
  if (value instanceof z.ZodBoolean) return { kind: 'boolean' };
  if (value instanceof z.ZodNumber) return { kind: 'number' };
  if (value instanceof z.ZodEnum && value.options.every((o) => typeof o === 'string')) return { kind: 'string', choices: value.options as string[] };
  if (value instanceof z.ZodArray && valueOf(value.element as z.ZodType) instanceof z.ZodString) return { kind: 'strings' };
  throw new Error(`${where}: a flag takes text, on or off, a number, one of several texts or a list of texts; not this schema`);
}
