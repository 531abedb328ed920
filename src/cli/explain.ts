import type { Argv } from 'yargs';
import { replay, type SentCall } from '../engine/replay.js';
import { replayContext } from '../engine/run.js';
import { streamStudyParallel } from '../engine/parallel.js';
import { UsageError } from '../errors.js';
import { align } from '../report/text.js';
import { loadScenarioFile } from '../scenario/load.js';
import { loadPolicyModules, specModules } from '../study/policy-modules.js';
import { displayPath, flagModel, policiesFromFlags } from '../study/study.js';
import { loadPrices } from '../pricing/load.js';
import { messageText, type TokenCounter } from '../tokens/counter.js';
import { TOKENIZERS } from '../tokens/encoding.js';
import type { Message } from '../types.js';
import { wholeNumberOption, type Command } from './_command.js';
import type { IO } from './_io.js';
import { POLICY_LIMIT_OPTIONS, policyLimits, type StudyFlags } from './_study.js';

interface ExplainFlags extends Pick<StudyFlags, 'policyTimeout' | 'policyMemory'> {
  scenario: string;
  policy: string;
  turn: number;
  model: string;
  tokenizer: string;
  seed: number;
}

export function explainCommand(io: IO): Command<ExplainFlags> {
  return {
    command: 'explain <scenario>',
    describe: 'print exactly what a policy sends at one turn, with token counts',
    examples: [
      ['ctxsim explain scenarios/noah-amnesia.yaml --policy window-turns:turns=2 --turn 5', 'what a two-exchange window sends at turn 5, with token counts'],
    ],
    builder: (y: Argv) =>
      y
        .positional('scenario', { type: 'string', demandOption: true, describe: 'scenario file' })
        .option('policy', { type: 'string', demandOption: true, describe: 'policy spec, e.g. window-turns:turns=3, or a policy module: ./policies/keep-edges.mjs:keep=1' })
        .option('turn', wholeNumberOption('turn', { demandOption: true, describe: 'turn number (from 1)' }))
        .option('model', { type: 'string', default: 'gpt-4o-mini', describe: 'chat model: prices, context window, tokenizer' })
        .option('tokenizer', { type: 'string', default: 'auto', describe: `auto | ${TOKENIZERS.join(' | ')}` })
        .option('seed', wholeNumberOption('seed', { default: 42, describe: 'random seed (the same as the run\'s, to see what it sent)' }))
        .options(POLICY_LIMIT_OPTIONS),
    handler: (argv: ExplainFlags) => explain(argv, io),
  };
}

/** `ctxsim explain`: replays up to the turn and prints each model call's prompt. */
export async function explain(flags: ExplainFlags, io: IO): Promise<number> {
  const conversation = loadScenarioFile(flags.scenario, displayPath(flags.scenario));
  const prices = loadPrices('builtin');
  flagModel(prices, flags.model, '--model');
  const variants = policiesFromFlags([flags.policy], await loadPolicyModules(specModules([flags.policy]), undefined, flags.policyTimeout), prices);
  if (variants.length !== 1) throw new UsageError(`--policy ${flags.policy}: explain takes one policy, not a sweep`);
  const n = conversation.turns.length;
  if (flags.turn < 1 || flags.turn > n) {
    throw new UsageError(`--turn: expected a turn from 1 to ${n}, got ${flags.turn}`);
  }
  const ctx = replayContext({ ...flags, prices });
  const calls: SentCall[] = [];
  const turn = conversation.turns[flags.turn - 1]!;
  const replayed = { ...conversation, turns: conversation.turns.slice(0, flags.turn) };
  // A module's replay is made first on a watched worker thread: a call that never returns, or runs out of memory, stops there.
  if (variants[0]!.module) {
    const settings = { seed: flags.seed, models: [flags.model], tokenizer: flags.tokenizer, prices, tokenCache: false as const, jobs: 1 };
    await streamStudyParallel({ ...settings, conversations: [replayed], policies: variants, ...policyLimits(flags) }, () => {});
  }
  replay(replayed, variants[0]!, ctx, (t, call) => {
    if (t === flags.turn) calls.push(call);
  });
  io.out(`${conversation.id} · ${variants[0]!.name} · turn ${turn.index} · ${ctx.encoding.name}${ctx.encoding.estimate ? ' (estimate)' : ''}\n`);
  calls.forEach((call, i) => {
    io.out(`\ncall ${i + 1} of ${calls.length}${call.plan.overBudget ? ' (over budget)' : ''}\n`);
    io.out(callTable(call, ctx.tokens));
    // A transcript's billed usage for this call (the call that wrote its output), beside what ctxsim counts.
    const billed = call.output?.billed;
    if (billed) io.out(`  billed by the provider: ${billed.input} prompt tokens (ctxsim counts ${call.promptTokens}, ${signedPercent(call.promptTokens / billed.input - 1)})\n`);
    io.out(policyMade(call, ctx.tokens));
  });
  return 0;
}

function signedPercent(x: number): string {
  return `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}%`;
}

function label(m: Message): string {
  if (!m.origin) return m.role;
  return m.score === undefined ? `${m.role}[${m.origin}]` : `${m.role}[${m.origin} ${m.score.toFixed(2)}]`;
}

/** The messages the policy made (summary, retrieved memories, fact sheet) in full, and the upkeep the user waited for. */
function policyMade(call: SentCall, tokens: TokenCounter): string {
  let out = '';
  call.plan.messages.forEach((m, i) => {
    if (!m.origin) return;
    const score = m.score === undefined ? '' : `, score ${m.score.toFixed(4)}`;
    out += `  #${i + 1} ${m.origin} (policy-made${score}, ${tokens.message(m)} tokens): ${m.content}\n`;
  });
  for (const u of call.plan.upkeep) {
    out += `  upkeep before this call: ${u.kind} on ${u.model}, ${u.inputTokens} in, ${u.outputTokens} out\n`;
  }
  return out;
}

function preview(m: Message): string {
  const t = messageText(m).replace(/\s+/g, ' ').trim();
  return t.length > 80 ? `${t.slice(0, 79)}…` : t;
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
