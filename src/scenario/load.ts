import { ScenarioError, type Problem } from '../errors.js';
import { readInputText, unreadableReason } from '../process.js';
import type { BilledCall, Conversation, ForgetEvent, Message, Turn } from '../types.js';
import { messageText } from '../tokens/counter.js';
import { SourceDoc } from '../text/document.js';
import { parseDuration } from '../text/duration.js';
import { normalize, occursIn } from '../text/normalize.js';
import { forgetSchema, messageSchema, oneRoundTurnSchema, roundsTurnSchema, scenarioSchema, systemMessageSchema, type RoundDoc, type ToolDoc, type UsageDoc } from './schema.js';

export const DEFAULT_GAP_SECONDS = 30;

/**
 * The keys of a study file, by which a mapping with no turns is told to be a
 * study handed where a scenario belongs. The study layer gives them
 * (`STUDY_FILE_KEYS`, study/scenario-file.ts, from the settings' specs);
 * none given: a document is not checked for them (a generated or imported
 * one).
 */
export type StudyKeys = ReadonlySet<string>;

const NO_KEYS: StudyKeys = new Set();

/** Reads a scenario file (YAML or JSON); throws a ScenarioError listing every problem (one of `studyKeys` and no turns: a study file). */
export function scenarioFromFile(file: string, displayName = file, studyKeys = NO_KEYS): Conversation {
  return scenarioPlacedFromFile(file, displayName, studyKeys).conversation;
}

/** `scenarioFromFile`, with the place of the scenario's id (for errors about the id, such as a duplicate). */
export function scenarioPlacedFromFile(file: string, displayName = file, studyKeys = NO_KEYS): { conversation: Conversation; idAt: Problem } {
  const src = readDoc(file, displayName);
  return { conversation: scenarioFromDoc(src, studyKeys), idAt: src.problem(['id'], '') };
}

/** Reads a file that may hold a scenario or a study: the scenario, or `study` when it is a study file (see `isStudyDoc`). */
export function scenarioOrStudyFromFile(file: string, displayName: string, studyKeys: StudyKeys): Conversation | 'study' {
  const src = readDoc(file, displayName);
  return isStudyDoc(src.value, studyKeys) ? 'study' : scenarioFromDoc(src, studyKeys);
}

/** A study file, told from a scenario: a mapping with no turns and a key only a study has. */
function isStudyDoc(root: unknown, studyKeys: StudyKeys): boolean {
  return root !== null && typeof root === 'object' && !Array.isArray(root) && !('turns' in root) && Object.keys(root).some((k) => studyKeys.has(k));
}

function readDoc(file: string, displayName: string): SourceDoc {
  let text: string;
  try {
    text = readInputText(file, { shown: displayName });
  } catch (e) {
    throw new ScenarioError([{ file: displayName, path: '', message: unreadableReason(e) }]);
  }
  return SourceDoc.parse(displayName, text);
}

/** Parses scenario text; `file` names it in errors (one of `studyKeys` and no turns: a study file). */
export function scenarioFromText(file: string, text: string, studyKeys = NO_KEYS): Conversation {
  return scenarioFromDoc(SourceDoc.parse(file, text), studyKeys);
}

/**
 * Validates a scenario built in memory (generated or imported) by the same
 * path as a file; `file` names it in errors, which carry no line numbers.
 */
export function scenarioFromValue(file: string, value: unknown): Conversation {
  return scenarioFromDoc(SourceDoc.fromValue(file, value), NO_KEYS);
}

function scenarioFromDoc(src: SourceDoc, studyKeys: StudyKeys): Conversation {
  const problems: Problem[] = [];
  const root = src.value;
  if (root === null || typeof root !== 'object' || Array.isArray(root)) {
    throw new ScenarioError([src.problem([], 'expected a mapping with id and turns')]);
  }
  if (isStudyDoc(root, studyKeys)) {
    throw new ScenarioError([src.problem([], 'this is a study file, not a scenario (it has no turns): run it with ctxsim run FILE')]);
  }
  const doc = src.check(scenarioSchema, root, [], problems);
  const system = systemMessages(src, (root as { system?: unknown }).system, problems);
  const items = Array.isArray((root as { turns?: unknown }).turns) ? ((root as { turns: unknown[] }).turns) : [];

  const turns: Turn[] = [];
  /** Where each turn's facts are written (the index of its item). */
  const turnItems: number[] = [];
  const forgets: ForgetEvent[] = [];
  const stated = new Set<string>();
  let open: (Omit<Turn, 'assistant'> & { assistant?: Message }) | undefined;
  let closed = true;

  const startTurn = (
    i: number,
    user: string,
    extra: { facts?: Record<string, string>; probe?: string[]; gap?: string | number; injection?: boolean; name?: string },
    tools: readonly ToolDoc[] | readonly RoundDoc[],
  ) => {
    const index = turns.length + 1;
    const factsAll = extra.facts ?? {};
    for (const k of Object.keys(factsAll)) stated.add(k);
    (extra.probe ?? []).forEach((f, j) => {
      if (!stated.has(f)) problems.push(src.problem(['turns', i, 'probe', j], `fact "${f}" is not stated in this or an earlier turn`));
    });
    const turn: Turn = {
      index,
      user: { role: 'user', content: user, ...(extra.name !== undefined && { name: extra.name }), turn: index },
      tools: toolMessages(tools, index),
      facts: factsAll,
      probe: extra.probe ?? [],
      gapSeconds: extra.gap === undefined ? DEFAULT_GAP_SECONDS : parseDuration(extra.gap)!,
      injection: extra.injection ?? false,
    };
    turns.push(turn);
    turnItems.push(i);
    open = turn;
    return turn;
  };

  items.forEach((item, i) => {
    const path = ['turns', i];
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(src.problem(path, 'expected a turn (user: …), a message (role: …) or an event (forget: […])'));
      return;
    }
    if ('forget' in item) {
      const ev = src.check(forgetSchema, item, path, problems);
      if (!ev) return;
      ev.forget.forEach((f, j) => {
        if (!stated.has(f)) problems.push(src.problem([...path, 'forget', j], `fact "${f}" is not stated in an earlier turn`));
      });
      forgets.push({ afterTurn: turns.length, facts: ev.forget });
      closed = true;
      return;
    }
    if ('role' in item) {
      const m = src.check(messageSchema, item, path, problems);
      if (!m) return;
      if (m.role === 'user') {
        startTurn(i, m.content, m, []);
        closed = false;
      } else if (closed || !open) {
        problems.push(src.problem([...path, 'role'], 'an assistant message must follow a user message'));
      } else {
        for (const k of ['facts', 'probe', 'gap', 'injection'] as const) {
          if (m[k] !== undefined) problems.push(src.problem([...path, k], 'belongs on the user message'));
        }
        open.assistant = { role: 'assistant', content: m.content, ...(m.name !== undefined && { name: m.name }), turn: open.index };
        closed = true;
      }
      return;
    }
    const tools = (item as { tools?: unknown }).tools;
    const rounds = Array.isArray(tools) ? tools.filter((x) => x !== null && typeof x === 'object' && 'calls' in x).length : 0;
    if (rounds && rounds !== (tools as unknown[]).length) {
      problems.push(src.problem([...path, 'tools'], 'give tool calls ({call: …}) or rounds ({calls: […]}), not both'));
      return;
    }
    const t = rounds ? src.check(roundsTurnSchema, item, path, problems) : src.check(oneRoundTurnSchema, item, path, problems);
    if (!t) return;
    const turn = startTurn(i, t.user, { ...t, ...(t.names?.user !== undefined && { name: t.names.user }) }, t.tools ?? []);
    const replyName = t.names?.assistant;
    if (replyName !== undefined && t.assistant === undefined) problems.push(src.problem([...path, 'names', 'assistant'], 'a name for a reply the turn does not have (no assistant:)'));
    if (t.assistant !== undefined) {
      (turn as { assistant?: Message }).assistant = { role: 'assistant', content: t.assistant, ...(replyName !== undefined && { name: replyName }), turn: turn.index, ...(t.usage && { billed: billedCall(t.usage) }) };
    }
    closed = true;
  });

  // A fact the turn never states would read as a memory failure: its value must occur in the turn, compared as probes are scored.
  // The turn's text is normalized once for all its facts (an agent's turn can hold megabytes of tool results).
  turns.forEach((t, k) => {
    const names = Object.keys(t.facts);
    if (!names.length) return;
    const text = normalize(turnText(t));
    for (const name of names) {
      if (!occursIn(text, normalize(t.facts[name]!))) problems.push(src.problem(['turns', turnItems[k]!, 'facts', name], factMissingMessage(name, t.facts[name]!)));
    }
  });
  doc?.tool_defs?.forEach((t, i) => {
    const j = doc.tool_defs!.findIndex((u) => u.name === t.name);
    if (j !== i) problems.push(src.problem(['tool_defs', i, 'name'], `tool ${t.name} is defined twice (also tool_defs[${j}])`));
  });
  if (doc?.billed && turns.some((t) => t.assistant?.billed || t.tools.some((m) => m.billed))) {
    problems.push(src.problem(['billed'], 'a total for a conversation whose calls carry their usage: give one or the other (usage per call is compared call by call)'));
  }
  if (doc && turns.length === 0 && problems.length === 0) problems.push(src.problem(['turns'], 'expected at least one turn with a user message'));
  if (problems.length) throw new ScenarioError(problems);
  const d = doc!;
  return {
    id: d.id,
    ...(d.title !== undefined && { title: d.title }),
    system,
    userId: d.user ?? 'user',
    // Weight 1 is the default and is left out, so the content hash stays the one of a file without it.
    ...(d.weight !== undefined && d.weight !== 1 && { weight: d.weight }),
    turns,
    forgets,
    ...(d.tool_defs?.length && { toolDefs: d.tool_defs }),
    ...(d.unlogged_prefix && { unloggedTokens: d.unlogged_prefix.tokens }),
    ...(d.warm_start && { warmStart: d.warm_start.cached }),
    ...(d.model !== undefined && { model: d.model }),
    ...(d.billed && { billed: d.billed }),
    ...(d.recorded !== undefined && { recorded: d.recorded }),
    source: src.file,
  };
}

/** The pinned system messages of `system:`: one text, or a list of `{content, name}` (each checked on its own). */
function systemMessages(src: SourceDoc, system: unknown, problems: Problem[]): Message[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return [{ role: 'system', content: system }];
  if (!Array.isArray(system) || !system.length) {
    problems.push(src.problem(['system'], `expected the system prompt's text, or a list of messages {content, name}${Array.isArray(system) ? ', got an empty list' : ''}`));
    return [];
  }
  return system.flatMap((item, i): Message[] => {
    const m = src.check(systemMessageSchema, item, ['system', i], problems);
    return m ? [{ role: 'system', content: m.content, ...(m.name !== undefined && { name: m.name }) }] : [];
  });
}

/** The problem of a fact whose value its turn does not contain. */
function factMissingMessage(name: string, value: string): string {
  const shown = value.length > 60 ? `${JSON.stringify(value.slice(0, 57))}…` : JSON.stringify(value);
  return `fact "${name}": ${shown} occurs nowhere in this turn (user message, tool calls and results, assistant reply)`;
}

/** Everything a turn says: its user message, tool calls and results, and assistant reply, as the scorer reads them. */
function turnText(turn: Pick<Turn, 'user' | 'tools' | 'assistant'>): string {
  return [turn.user, ...turn.tools, ...(turn.assistant ? [turn.assistant] : [])].map(messageText).join('\n');
}

/** `turnText` of a turn document built in memory (generated or imported). */
export function turnDocText(turn: { user: string; tools?: readonly ToolDoc[] | readonly RoundDoc[]; assistant?: string }): string {
  return turnText({
    user: { role: 'user', content: turn.user, turn: 0 },
    tools: toolMessages(turn.tools ?? [], 0),
    ...(turn.assistant !== undefined && { assistant: { role: 'assistant', content: turn.assistant, turn: 0 } }),
  });
}

/** A call's `usage:` as the conversation holds it. */
function billedCall({ output_partial, ...u }: UsageDoc): BilledCall {
  return { ...u, ...(output_partial && { outputPartial: true }) };
}

/**
 * A turn's tool calls as messages: per round, one assistant message with the
 * round's text and `tool_calls`, then one `tool` message per result. Calls of
 * one round (the first form) are one round. Call ids run through the turn.
 */
function toolMessages(tools: readonly ToolDoc[] | readonly RoundDoc[], turn: number): Message[] {
  const rounds: readonly RoundDoc[] = tools.length && 'calls' in tools[0]! ? (tools as readonly RoundDoc[]) : tools.length ? [{ calls: tools as ToolDoc[] }] : [];
  const out: Message[] = [];
  let n = 0;
  for (const round of rounds) {
    const calls = round.calls.map((t) => ({ id: `call_${turn}_${++n}`, name: t.call, arguments: JSON.stringify(t.args ?? {}) }));
    out.push({ role: 'assistant', content: round.assistant ?? '', toolCalls: calls, turn, ...(round.usage && { billed: billedCall(round.usage) }), ...(round.gap !== undefined && { delay: parseDuration(round.gap)! }) });
    round.calls.forEach((t, i) => out.push({ role: 'tool', content: typeof t.result === 'string' ? t.result : JSON.stringify(t.result ?? null), toolCallId: calls[i]!.id, turn }));
  }
  return out;
}
