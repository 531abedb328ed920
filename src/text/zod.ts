import { z } from 'zod';

/** The schema inside a default or optional wrapper: what a value given must be. */
export function valueOf(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodDefault || schema instanceof z.ZodOptional ? valueOf(schema.unwrap() as z.ZodType) : schema;
}

/** The description on a schema or, failing that, on the one it wraps. */
export function descriptionOf(schema: z.ZodType): string | undefined {
  if (schema.description !== undefined) return schema.description;
  return schema instanceof z.ZodDefault || schema instanceof z.ZodOptional ? descriptionOf(schema.unwrap() as z.ZodType) : undefined;
}
