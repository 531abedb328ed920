import { z } from 'zod';
import type { TokenCounter } from '../tokens/counter.js';
import type { Message } from '../types.js';
import type { Upkeep } from '../upkeep/upkeep.js';
import { composeViews, newestRoundStart } from './_agent.js';
import { moderated, valuesOf } from './_forget.js';
import { upkeepOf } from './_memory.js';
import { pinned, Transcript } from './_transcript.js';
import { definePolicy } from './define.js';
import { COMMON_PARAMS, defaultOf, text } from './params.js';
import { parseSpecString, resolveSpec, type PolicyVariant } from './spec.js';
import type { Policy } from './types.js';

/** What joins the stages of a pipeline in its spec and its name. */
export const STAGE_SEPARATOR = ' > ';

/** The stages of a pipeline given none: masking, then a summary and buffer (the hybrid). */
const DEFAULT_STAGES = 'mask-observations > summary-buffer';

/**
 * The `pipeline` policy over a registry (looked up when a spec is resolved or
 * a session starts): stages applied in order, as OpenHands chains its
 * condensers. Every stage but the last rewrites tool results
 * (`mask-observations`, `clear-tool-results`); the last is any policy, the
 * memory, and it sees the conversation as those stages show it — it measures
 * each message as sent, and its summarizer reads the rewritten results — so
 * `mask-observations > summary-buffer` (the default) summarizes only when
 * the masked context outgrows its budget (the hybrid of Lindenbauer et al.,
 * 2025). A pipeline of rewriting stages alone keeps everything else
 * (`full`); common parameters given to a pipeline go to its last stage.
 */
export function pipelinePolicy(registry: () => ReadonlyMap<string, Policy>): Policy {
  const policy = definePolicy({
    id: 'pipeline',
    describe: 'stages in order: tool-result rewriting (mask-observations, clear-tool-results), then a memory policy that sees what they send',
    params: z.object({
      stages: text({ default: DEFAULT_STAGES, describe: `the stages as policy specs joined by "${STAGE_SEPARATOR.trim()}", e.g. mask-observations:keep=5 > summary-buffer:budget=30000` }),
    }),
    start(conversation, params, deps) {
      const stages = resolveStages(params.stages);
      if (typeof stages === 'string') throw new Error(stages);
      const chosen = stages.map((list) => list[0]!);
      const memory = chosen[chosen.length - 1]!.policy.view ? resolveSpec(registry(), 'full', []) : [chosen.pop()!];
      if (typeof memory === 'string') throw new Error(memory);
      const views = chosen.map((v) => v.policy.view!(v.params, deps.tokens));
      const head = pinned(conversation);
      const transcript = new Transcript(params.sessionCap);
      let current: ReadonlyMap<Message, Message> = new Map();
      const view = (m: Message) => current.get(m) ?? m;
      const { policy: inner, params: innerParams } = memory[0]!;
      const session = inner.start(conversation, innerParams, { ...deps, tokens: viewTokens(deps.tokens, view), upkeep: viewUpkeep(upkeepOf(deps), view) });
      return {
        prompt(pending, info) {
          const all = [...head, ...transcript.flat, ...pending];
          current = composeViews(views, all, head.length + transcript.flat.length + newestRoundStart(pending));
          const plan = session.prompt(pending, info);
          return { ...plan, messages: plan.messages.map(view) };
        },
        commit(exchange, info) {
          if (!moderated(params, info)) transcript.add(exchange);
          return session.commit(exchange, info);
        },
        forget(facts, info) {
          transcript.redact(valuesOf(facts));
          return session.forget(facts, info);
        },
        artifacts: () => session.artifacts(),
      };
    },
  });

  /**
   * Each stage's variants (a stage with a list of values is a sweep), checked:
   * rewriting stages first, then one memory; `last` are parameters added to
   * the last stage.
   */
  function resolveStages(spec: string, last: readonly (readonly [string, unknown])[] = []): PolicyVariant[][] | string {
    const parts = spec.split('>').map((s) => s.trim());
    if (parts.some((s) => !s)) return `pipeline: expected stages joined by "${STAGE_SEPARATOR.trim()}", got "${spec}"`;
    const out: PolicyVariant[][] = [];
    for (const [i, part] of parts.entries()) {
      const s = parseSpecString(part);
      if (typeof s === 'string') return `pipeline stage ${i + 1}: ${s}`;
      if (s.id === 'pipeline') return `pipeline stage ${i + 1}: a pipeline cannot be a stage`;
      const variants = resolveSpec(registry(), s.id, i === parts.length - 1 ? [...s.given, ...last] : s.given);
      if (typeof variants === 'string') return `pipeline stage ${i + 1}: ${variants}`;
      if (i < parts.length - 1 && !variants[0]!.policy.view) return `pipeline stage ${i + 1}: ${s.id} must be last (only ${rewriters().join(' and ')} come before the last stage)`;
      out.push(variants);
    }
    return out;
  }

  /** The policies that may come before a pipeline's last stage: those with a view of what they rewrite. */
  function rewriters(): string[] {
    return [...registry().values()].filter((p) => p.view).map((p) => p.id);
  }

  /** One variant per combination of the stages' variants, named by its stages. */
  function variants(given: readonly (readonly [string, unknown])[]): PolicyVariant[] | string {
    let spec = DEFAULT_STAGES;
    const last: (readonly [string, unknown])[] = [];
    for (const [key, value] of given) {
      if (key === 'stages' && typeof value === 'string') spec = value;
      else if (key in COMMON_PARAMS.shape) last.push([key, value]);
      else return `policy pipeline: parameter ${key}: expected its stages (stages=…), or a common parameter (${Object.keys(COMMON_PARAMS.shape).join(', ')}) for its last stage`;
    }
    const stages = resolveStages(spec, last);
    if (typeof stages === 'string') return stages;
    let combos: PolicyVariant[][] = [[]];
    for (const list of stages) combos = combos.flatMap((c) => list.map((v) => [...c, v]));
    const common = Object.fromEntries(Object.entries(COMMON_PARAMS.shape).map(([k, s]) => [k, defaultOf(s)]));
    return combos.map((chosen) => {
      const stagesText = chosen.map((v) => v.name).join(STAGE_SEPARATOR);
      // The memory stage's budget and common parameters are the pipeline's: what it sends is checked against them.
      const memory = chosen[chosen.length - 1]!.params;
      const own = Object.fromEntries(['budget', ...Object.keys(common)].filter((k) => memory[k] !== undefined).map((k) => [k, memory[k]]));
      return { name: `pipeline:${stagesText}`, policy, params: { ...common, ...own, stages: stagesText } };
    });
  }

  return Object.assign(policy, { variants });
}

/** The run's counter, counting each message as a view shows it (one object per session: a proxy that forwards the rest). */
function viewTokens(tokens: TokenCounter, view: (m: Message) => Message): TokenCounter {
  return new Proxy(tokens, {
    get(target, prop) {
      if (prop === 'message') return (m: Message) => target.message(view(m));
      if (prop === 'prompt') return (ms: readonly Message[]) => target.prompt(ms.map(view));
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The run's upkeep, reading each message as a view shows it. */
function viewUpkeep(upkeep: Upkeep, view: (m: Message) => Message): Upkeep {
  return {
    summarize: (req) => upkeep.summarize({ ...req, folded: req.folded.map(view) }),
    forgetInSummary: (req) => upkeep.forgetInSummary(req),
    extract: (req) => upkeep.extract({ ...req, exchange: req.exchange.map(view) }),
    embed: (t, model) => upkeep.embed(t, model),
  };
}

