import { z } from 'zod';
import { ScenarioError, type Problem } from '../../errors.js';
import { normalizeText, type ScenarioOut, type ToolOut } from '../docs.js';
import { DatasetIds, JsonSource, datasetId, parseJson, readText } from './_read.js';
import { datasetPrefix } from './_shared-options.js';
import { TurnBuilder } from './_turns.js';
import { QuirkLog, type Importer } from './types.js';

const options = z.strictObject({
  prefix: datasetPrefix('abcd'),
  system: z.string().optional().describe('system prompt for every conversation'),
});

/** ABCD import options. */
export type AbcdOptions = z.output<typeof options>;

const row = z.tuple([z.enum(['agent', 'customer', 'action']), z.string()]);
const conversation = z.looseObject({
  convo_id: z.union([z.string(), z.number()]),
  scenario: z.looseObject({
    personal: z.record(z.string(), z.unknown()).optional(),
    order: z.record(z.string(), z.unknown()).optional(),
    flow: z.string().optional(),
    subflow: z.string().optional(),
  }),
  original: z.array(row).min(1),
  delexed: z.array(z.looseObject({ speaker: z.string(), targets: z.array(z.unknown()).optional() })).optional(),
});

/**
 * Scenario fields that become facts when the customer types them. Left out:
 * `state` (two letters: "ok", "in", "me" match ordinary words), and
 * `num_products`, `packaging`, `products` (not things a customer states).
 */
export const ABCD_FACT_FIELDS = [
  'customer_name', 'username', 'email', 'phone', 'account_id', 'member_level',
  'order_id', 'street_address', 'full_address', 'city', 'zip_code', 'payment_method', 'purchase_date',
] as const;

/** Action texts → call names, for rows without a delexed target. */
const ACTION_PATTERNS: readonly [RegExp, string][] = [
  [/^account has been pulled up/i, 'pull_up_account'],
  [/^purchase validation/i, 'validate_purchase'],
  [/^identity verification/i, 'verify_identity'],
  [/^details of .* have been entered/i, 'enter_details'],
  [/has been notified/i, 'notify_team'],
  [/^searching the faq/i, 'search_faq'],
  [/^faq answer related to/i, 'select_faq'],
  [/^system action: search (\w+)/i, 'search_$1'],
  [/^a password has been (generated|reset)/i, 'make_password'],
  [/^a refund has been made/i, 'offer_refund'],
  [/^order has been updated/i, 'update_order'],
  [/^a link will be sent/i, 'send_link'],
  [/^membership level of/i, 'membership'],
  [/^a purchase of/i, 'make_purchase'],
];

/** The tool name of an action: from the delexed target (`pull-up-account` → `pull_up_account`), else from its text. */
export function actionName(text: string, target?: unknown): string {
  if (typeof target === 'string' && target.trim()) return callName(target);
  for (const [re, name] of ACTION_PATTERNS) {
    const m = re.exec(text);
    if (m) return name.replace('$1', (m[1] ?? '').toLowerCase());
  }
  return callName(text.split(/\s+/).slice(0, 3).join(' ')) || 'action';
}

function callName(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
}

/** Finds a value in text as written there: case-insensitive, any whitespace, not inside a longer word. */
function findValue(text: string, value: string): string | undefined {
  const pattern = value
    .trim()
    .split(/\s+/)
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('\\s+');
  const m = new RegExp(`(?<![\\p{L}\\p{N}])${pattern}(?![\\p{L}\\p{N}])`, 'iu').exec(text);
  return m?.[0];
}

/**
 * ABCD customer-service chats: `original` rows [speaker, text] with agent →
 * assistant, customer → user, action → a tool call whose result is the
 * action text. Facts are scenario values the customer types; an action that
 * uses a stated value probes it.
 */
export const abcd: Importer<AbcdOptions> = {
  id: 'abcd',
  describe: 'ABCD customer-service dialogues (JSON array with scenario, original and delexed)',
  options,
  read({ path, file }, opts) {
    const text = readText(path, file);
    const root = parseJson(text, file);
    const src = new JsonSource(file, text);
    // The sample is an array; the full release is {train: [...], dev: [...], test: [...]}.
    const splits: [string | undefined, unknown[]][] = Array.isArray(root)
      ? [[undefined, root]]
      : root && typeof root === 'object' && Object.values(root).every(Array.isArray)
        ? Object.entries(root as Record<string, unknown[]>)
        : [];
    if (!splits.length) throw new ScenarioError([src.problem([], 'expected a JSON array of ABCD conversations, or {split: [...]}')]);
    const problems: Problem[] = [];
    const quirks = new QuirkLog();
    const docs: ScenarioOut[] = [];
    const ids = new DatasetIds(src);
    for (const [split, list] of splits) {
      list.forEach((raw, i) => {
        const at = split === undefined ? [i] : [split, i];
        const c = src.check(conversation, raw, at, problems);
        if (!c) return;
        const doc = conversationDoc(c, opts, quirks);
        if (ids.add(doc.id, [...at, 'convo_id'], problems)) docs.push(doc);
      });
    }
    if (problems.length) throw new ScenarioError(problems);
    return { docs, quirks: quirks.list() };
  },
};

function conversationDoc(c: z.infer<typeof conversation>, opts: AbcdOptions, quirks: QuirkLog): ScenarioOut {
  const id = String(c.convo_id);
  const gold: [string, string][] = [];
  for (const field of ABCD_FACT_FIELDS) {
    const v = c.scenario.personal?.[field] ?? c.scenario.order?.[field];
    if (typeof v === 'string' && v.trim().length >= 2) gold.push([field, v]);
  }
  const aligned = c.delexed?.length === c.original.length;
  if (c.delexed && !aligned) quirks.add('delexed-misaligned', 'conversations whose delexed rows do not line up (action names from text)', id);
  const b = new TurnBuilder();
  const stated = new Map<string, string>();
  c.original.forEach(([speaker, text], i) => {
    if (speaker === 'customer') {
      b.user(text);
      for (const [field, v] of gold) {
        const found = findValue(text, v);
        if (found === undefined) continue;
        b.fact(field, found);
        stated.set(field, normalizeText(found));
      }
      return;
    }
    if (speaker === 'agent') {
      if (b.assistant(text)) quirks.add('agent-first', 'agent messages before any customer message (turn with an empty user message)', id);
      return;
    }
    const target = aligned && c.delexed![i]!.speaker === 'action' ? c.delexed![i]!.targets : undefined;
    const values = Array.isArray(target?.[3]) ? (target[3] as unknown[]).filter((v): v is string => typeof v === 'string') : [];
    const tool: ToolOut = { call: actionName(text, target?.[2]), ...(values.length && { args: { values } }), result: text };
    if (b.hasReply) quirks.add('action-after-reply', 'actions after the agent reply of their turn (placed before it)', id);
    if (b.tool(tool)) quirks.add('action-first', 'actions before any customer message (turn with an empty user message)', id);
    const used = normalizeText([text, ...values].join(' \n '));
    for (const [field, v] of stated) if (used.includes(v)) b.probe(field);
  });
  const flow = [c.scenario.flow, c.scenario.subflow].filter(Boolean).join(' / ');
  return {
    id: datasetId(opts.prefix, id),
    ...(flow && { title: flow }),
    ...(opts.system !== undefined && { system: opts.system }),
    turns: b.finish(),
  };
}
