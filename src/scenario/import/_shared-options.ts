/**
 * Options several importers take, each declared once with its description:
 * the command-line help, the study file's JSON Schema and the checks of
 * `import:` entries all read it from here.
 * @module
 */
import { z } from 'zod';

/** An id prefix as written: a-z, 0-9 and `-`. */
const idText = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a-z, 0-9 and -');

/** `prefix` of a dataset whose conversations have ids of their own: ids are `<prefix>-<that id>`. */
export const datasetPrefix = (format: string) => idText.default(format).describe('id prefix, before the conversation’s id in the dataset (default: the format’s id)');

/** `prefix` of a file of conversations without ids: ids are `<prefix>-0001`… in file order. */
const numberedPrefix = idText.optional().describe('id prefix, before the conversation’s number in the file (default: the file’s name)');

/** `prefix` of a log of one conversation: its id. */
const sessionId = idText.optional().describe('the conversation’s id (default: the file’s name)');

/** Facts and probes for every conversation, as `openai` and the agent-transcript importers take them. */
const annotationOptions = {
  annotations: z.string().min(1).optional().describe('side file (YAML or JSON) of facts and probes by conversation id, "*" for every one'),
  fact: z
    .array(z.string().regex(/^[^=]+=.+$/s, 'expected name=value'))
    .optional()
    .describe('name=value for every conversation, placed where the user first says the value'),
  probe: z
    .array(z.string().regex(/^([1-9]\d*|last):[^,]+(,[^,]+)*$/, 'expected TURN:name[,name…] (TURN a number from 1, or last)'))
    .optional()
    .describe('TURN:name[,name…] for every conversation, TURN a number or last'),
};

/** The options of a file of conversations without ids (`openai`, `anthropic`): the id prefix, facts and probes. */
export const numberedFileOptions = z.strictObject({ prefix: numberedPrefix, ...annotationOptions });

/** The options of a log of one conversation (`claude-code`, `swe-agent`): its id, facts and probes. */
export const sessionLogOptions = z.strictObject({ prefix: sessionId, ...annotationOptions });
