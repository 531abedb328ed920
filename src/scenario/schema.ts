import { z } from 'zod';
import { parseDuration } from '../text/duration.js';

/** Scenario file schema (SPEC §2.1). Unknown keys are errors everywhere. */
const factValue = z.string();
const duration = z.union([z.string(), z.number()]).refine((v) => parseDuration(v) !== undefined, {
  message: 'expected a duration such as 30s, 5m, 2h or 1d',
});

export const toolSchema = z.strictObject({
  call: z.string().min(1),
  args: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
});

export const turnSchema = z.strictObject({
  user: z.string(),
  assistant: z.string().optional(),
  facts: z.record(z.string(), factValue).optional(),
  probe: z.array(z.string()).optional(),
  tools: z.array(toolSchema).optional(),
  gap: duration.optional(),
  injection: z.boolean().optional(),
});

/** A turn written as one chat message; user messages open a turn, assistant messages close it. */
export const messageSchema = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  facts: z.record(z.string(), factValue).optional(),
  probe: z.array(z.string()).optional(),
  gap: duration.optional(),
  injection: z.boolean().optional(),
});

export const forgetSchema = z.strictObject({
  forget: z.array(z.string()).min(1),
});

export const scenarioSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected an id of a-z, 0-9 and -, starting with a letter or digit'),
  title: z.string().optional(),
  system: z.string().optional(),
  user: z.string().optional(),
  turns: z.array(z.unknown()).min(1),
});

export type ScenarioDoc = z.infer<typeof scenarioSchema>;
export type TurnDoc = z.infer<typeof turnSchema>;
export type MessageDoc = z.infer<typeof messageSchema>;
export type ToolDoc = z.infer<typeof toolSchema>;
