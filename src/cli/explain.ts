import type { SentCall } from '../engine/replay.js';
import { escapeControl, UsageError } from '../errors.js';
import { usd } from '../records/format.js';
import { align } from '../report/text.js';
import { loadScenarioOrStudy } from '../study/scenario-file.js';
import { explainTurn, studyConversation, studyModel, type ExplainedCall, type ExplainedProbe, type ExplainedTurn, type ExplainedUpkeep } from '../study/explain.js';
import type { RunnableStudy } from '../study/pipeline.js';
import { priceWarnings } from '../study/price-check.js';
import { displayPath } from '../output/display.js';
import { messageText, type TokenCounter } from '../tokens/counter.js';
import type { Conversation, Message, Pico } from '../types.js';
import type { IO } from './_io.js';
import { oneSetting, upkeepOverrides } from './_setting-flags.js';
import { studyFromFlags, withFolderStudy, type StudyFlags } from './_study.js';

/** Its own flags; the settings' flags it takes (`--model`, one of the study's models; `--seed`, `--tokenizer`, `--cold-start`, `--upkeep`, `--cassette`, `--policy-timeout`, `--policy-memory`) are read as `run` reads them, from their specs. */
export interface ExplainFlags {
  [settingFlag: string]: unknown;
  /** A scenario or study file; none: the study in the working folder, else the built-in default study. */
  file?: string;
  scenario?: string;
  policy: string;
  turn: number;
  /** One chat model, as given (`run`'s `--model` is repeatable): `oneSetting` reads it. */
  model?: string;
}

/**
 * `ctxsim explain`: replays a scenario file (on the flags' model, seed and
 * tokenizer) or one conversation of a study (with everything the study sets,
 * as `run` replays it) through one policy, and prints each model call of the
 * turn: its prompt, its cost, the upkeep charged to the turn and the probes'
 * outcome.
 */
export async function explain(flags: ExplainFlags, io: IO): Promise<number> {
  const { study, conversation, model } = await explained(flags, io);
  for (const w of priceWarnings(study)) io.err(`ctxsim: warning: ${w}\n`);
  if (study.policies.length !== 1) throw new UsageError(`--policy ${flags.policy}: explain takes one policy, not a sweep`);
  const n = conversation.turns.length;
  if (flags.turn < 1 || flags.turn > n) {
    throw new UsageError(`--turn: expected a turn from 1 to ${n}, got ${flags.turn}`);
  }
  // Scenario and cassette text reach the terminal here: its control characters are escaped as an error line's are (each piece before the table is aligned, and the whole once more).
  io.out(escapeControl(explainText(await explainTurn(study, conversation, model, flags.turn)), true));
  return 0;
}

/**
 * What the flags explain: a study file's conversation and model, or a
 * scenario file on the flags' model (whose settings are the default
 * study's); without a file, the study in the working folder, else the
 * built-in default study.
 */
async function explained(flags: ExplainFlags, io: IO): Promise<{ study: RunnableStudy; conversation: Conversation; model: string }> {
  const { study: file } = withFolderStudy({ study: flags.file }, io);
  const given = file === undefined ? 'study' : loadScenarioOrStudy(file, displayPath(file));
  const { mode } = upkeepOverrides(flags);
  if (mode === 'record' || mode === 'live') throw new UsageError(`--upkeep ${mode}: explain sends nothing; record with ctxsim run --upkeep record, then explain with --upkeep replay`);
  const { seed, tokenizer, coldStart, upkeep, cassette, policyTimeout, policyMemory } = flags;
  const chosen = oneSetting(flags, 'models');
  const common: StudyFlags = { policy: [flags.policy], tokenCache: false, seed, tokenizer, coldStart, upkeep, cassette, policyTimeout, policyMemory };
  if (given === 'study') {
    const study = await studyFromFlags({ ...common, ...(file !== undefined && { study: file }) });
    return { study, conversation: studyConversation(study, flags.scenario), model: studyModel(study, chosen) };
  }
  if (flags.scenario !== undefined && flags.scenario !== given.id) throw new UsageError(`--scenario ${flags.scenario}: ${displayPath(file!)} is a scenario file, of scenario ${given.id}`);
  const study = await studyFromFlags({ ...common, model: [chosen ?? 'gpt-4o-mini'] });
  return { study, conversation: given, model: study.models[0]! };
}

/** The explained turn as text: a table per call, its cost and upkeep, then the turn's cost and its probes. */
function explainText(x: ExplainedTurn): string {
  const { ctx, calls, record } = x;
  let out = `${x.conversation.id} · ${x.policy} · turn ${x.turn.index} · ${ctx.model} · ${ctx.encoding.name}${ctx.encoding.estimate ? ' (estimate)' : ''}\n`;
  calls.forEach((c, i) => {
    const call = c.sent;
    out += `\ncall ${i + 1} of ${calls.length}${call.plan.overBudget ? ' (over budget)' : ''}\n`;
    out += callTable(call, ctx.tokens);
    if (x.turn.index === 1 && i === 0 && x.conversation.warmStart) out += warmLine(x.conversation.warmStart, ctx.spec.coldStart === true);
    out += costLine(c, record.model);
    // A transcript's billed usage for this call (the call that wrote its output), beside what ctxsim counts.
    const billed = call.output?.billed;
    // A bill of no prompt tokens has no ratio to show (a percentage of nothing is +Infinity%).
    if (billed) out += `  billed by the provider: ${billed.input} prompt tokens (ctxsim counts ${call.promptTokens}${billed.input ? `, ${signedPercent(call.promptTokens / billed.input - 1)}` : ''})\n`;
    out += policyMade(call, ctx.tokens);
    out += x.upkeep.filter((u) => u.beforeCall === i + 1).map((u) => upkeepLine('before this call', u)).join('');
  });
  const after = x.upkeep.filter((u) => u.beforeCall === undefined);
  if (after.length) out += `\n${after.map((u) => upkeepLine('after the calls', u)).join('')}`;
  const callsCost = calls.reduce((sum, c) => sum + callCost(c), 0n);
  out += `\nturn ${x.turn.index} cost: ${money(record.cost)}`;
  out += x.upkeep.length ? ` (calls ${money(callsCost)}, upkeep ${money(record.costUpkeep)})\n` : '\n';
  return out + x.probes.map(probeLine).join('');
}

const money = (p: Pico) => `$${usd(p)}`;

const callCost = ({ cost }: ExplainedCall): Pico => cost.input + cost.cached + cost.output;

/** A call's prompt tokens as the cost model prices them, and its cost. */
function costLine(c: ExplainedCall, model: string): string {
  const { cost } = c;
  const on = `${cost.model}${cost.fallback ? ` (failed on ${model}, retried)` : ''}`;
  if (cost.overflow) return `  cost on ${on}: none, over the model's context window (rejected)\n`;
  const uncached = cost.inputTokens - cost.cachedTokens - cost.cacheWriteTokens;
  return `  cost on ${on}: ${uncached} uncached, ${cost.cachedTokens} cache reads, ${cost.cacheWriteTokens} cache writes, ${cost.outputTokens} output tokens: ${money(callCost(c))}\n`;
}

/** The cache the conversation's first call found, as its transcript recorded it (`warm_start:`), and whether this replay starts with it. */
function warmLine(tokens: number, cold: boolean): string {
  return cold
    ? `  cold start: the transcript's first call read ${tokens} tokens from the cache, written before it; this replay starts with none (--cold-start)\n`
    : `  warm start: ${tokens} tokens of this prompt were in the cache before the call (written before the conversation, as its transcript's first call read them; --cold-start: none)\n`;
}

function upkeepLine(when: string, { upkeep: u, price }: ExplainedUpkeep): string {
  return `  upkeep ${when}: ${u.kind} on ${u.model}, ${u.inputTokens} in, ${u.outputTokens} out: ${price.overflow ? 'none, over the model\'s context window' : money(price.cost)}\n`;
}

/** A probe's outcome, as the run scored it on the turn's first call. */
function probeLine({ record: p, found }: ExplainedProbe): string {
  const where = p.source === 'window' ? 'the window' : `the ${p.source === 'facts' ? 'fact sheet' : p.source === 'retrieved' ? 'retrieved memories' : p.source}`;
  const why =
    p.outcome === 'retained'
      ? `value "${found}" in call 1's prompt, from ${where}`
      : p.outcome === 'stale'
        ? `only an older value, "${found}", in call 1's prompt, from ${where}`
        : p.outcome === 'missing'
          ? 'no value of it in call 1\'s prompt'
          : 'call 1 was over the model\'s context window: rejected';
  const forgotten = p.expected === 'missing' ? `; the user asked to forget it${p.violation ? ': a violation' : ''}` : '';
  const answer = p.answer ? `; the reply: ${p.answer}${p.judged ? ' (judged)' : ''}` : '';
  return `probe ${p.fact}: ${p.outcome} (${why}${forgotten})${answer}\n`;
}

function signedPercent(x: number): string {
  return `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}%`;
}

function label(m: Message): string {
  if (!m.origin) return m.role;
  return m.score === undefined ? `${m.role}[${m.origin}]` : `${m.role}[${m.origin} ${m.score.toFixed(2)}]`;
}

/** The messages the policy made (summary, retrieved memories, fact sheet) in full. */
function policyMade(call: SentCall, tokens: TokenCounter): string {
  let out = '';
  call.plan.messages.forEach((m, i) => {
    if (!m.origin) return;
    const score = m.score === undefined ? '' : `, score ${m.score.toFixed(4)}`;
    out += `  #${i + 1} ${m.origin} (policy-made${score}, ${tokens.message(m)} tokens): ${shownWhole(m.content)}\n`;
  });
  return out;
}

/**
 * A text printed whole (a summary, a fact sheet): control characters
 * escaped, and each line after the first indented, so no line of it reads
 * as one of explain's own.
 */
function shownWhole(text: string): string {
  return escapeControl(text, true).replace(/\n/g, '\n      ');
}

/** A message's text on one line of the table: whitespace runs made one space, cut at 80 characters, control characters escaped (before the table is aligned). */
function preview(m: Message): string {
  const t = messageText(m).replace(/\s+/g, ' ').trim();
  return escapeControl(t.length > 80 ? `${t.slice(0, 79)}…` : t);
}

function callTable(call: SentCall, tokens: TokenCounter): string {
  const rows = [
    ['#', 'role', 'turn', 'tokens', 'text'],
    // What the transcript's log left out comes first, then the tool definitions.
    ...(call.unloggedTokens ? [['', 'unlogged prefix', '', String(call.unloggedTokens), 'what the log left out, sized from its bill (an estimate)']] : []),
    ...(call.toolTokens ? [['', 'tool definitions', '', String(call.toolTokens), 'offered with every call']] : []),
    ...call.plan.messages.map((m, i) => [String(i + 1), label(m), m.turn === undefined ? '-' : String(m.turn), String(tokens.message(m)), preview(m)]),
  ];
  if (tokens.template) {
    // The template's framing: what the rendered prompt holds beyond the rows above (special tokens, headers, generation prompt).
    const rest = call.promptTokens - call.unloggedTokens - call.toolTokens - call.plan.messages.reduce((n, m) => n + tokens.message(m), 0);
    rows.push(['', 'template', '', String(rest), `${tokens.encoding}'s chat template${call.templateEstimate ? ' (adapted: an estimate)' : ''}`]);
  } else if (tokens.overhead.replyPriming) rows.push(['', 'reply priming', '', String(tokens.overhead.replyPriming), '']);
  rows.push(['', 'total', '', String(call.promptTokens), `${call.plan.messages.length} messages`]);
  return align(rows, new Set([0, 2, 3]));
}
