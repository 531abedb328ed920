import { createHash } from 'node:crypto';
import type { PolicyVariant } from '../policies/spec.js';
import type { PriceTable } from '../pricing/prices.js';
import { settingsModels } from '../pricing/settings.js';
import { CacheSpace } from '../store/store.js';
import type { Conversation } from '../types.js';
import type { ProbeRecord, SummaryRecord, TurnRecord, ViolationRecord } from '../records/registry.js';
import type { ReplayContext } from './replay.js';
import { engineId } from './version.js';

/**
 * The replay cache: the records of each unit of work — one scenario under one
 * policy variant on one chat model — kept in the `replay` namespace of the
 * store in the cache folder (`~/.cache/ctxsim/replay/` by default on Linux; see
 * store/store.ts for the entry format, writes and eviction), so a rerun
 * replays only the units whose inputs changed.
 *
 * A unit's key is the SHA-256 of everything its records depend on: ctxsim's
 * version and the engine's (`ENGINE_VERSION`, version.ts: bumped when
 * replays make other records; no hash of the code, so an edit outside the
 * engine keeps the cache warm), the conversation's content, the variant
 * (name, policy id, parameters, a policy module's hash and its imports'), the run's spec as
 * the unit's chat model sees it (`unitSpec`: seed, model, tokenizer, the cost
 * settings, message rules, upkeep, tool definitions, …), and the price-table
 * entries of the models the unit can price (see `priceKey`). A change to any of them is a
 * new key; entries nobody asks for again age out.
 *
 * An entry's payload is the unit's records, `v8.serialize`d. A damaged entry
 * is never trusted: the unit is replayed again and the entry replaced, with
 * a warning.
 */

/** What of a policy module keys its units: its file's hash, and with the files it imports (`PolicyModule.imports`), theirs too (a module that imports none keys as before). */
function moduleKey(module: NonNullable<PolicyVariant['module']>): string | readonly string[] {
  return module.imports === undefined ? module.hash : [module.hash, module.imports];
}

/** A unit's records: its turns, probes, summary row and violations. */
export interface UnitRecords {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  summary: SummaryRecord[];
  violations: ViolationRecord[];
}

/** JSON of plain data with Maps, Sets and bigints spelled out: a stable text to hash, the same on every thread. */
function canon(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return { $bigint: v.toString() };
    if (v instanceof Map) return { $map: [...v.entries()] };
    if (v instanceof Set) return { $set: [...v] };
    if (typeof v === 'function') return { $function: v.name };
    if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) };
    return v;
  });
}

function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

const isList = Array.isArray;

function isUnit(v: unknown): v is UnitRecords {
  const r = v as Partial<UnitRecords> | null;
  return !!r && typeof r === 'object' && isList(r.turns) && isList(r.probes) && isList(r.summary) && isList(r.violations);
}

/**
 * One thread's view of the replay cache in the cache folder `dir`:
 * keys of units, their records read and written, and counts of what a run
 * replayed and took from the cache. Problems (a damaged entry replayed, a
 * failed write) are kept as warnings, one line each; the cache never fails a
 * run.
 */
export class ReplayCache {
  /** Units replayed (misses). */
  replayed = 0;
  /** Units taken from the cache (hits). */
  cached = 0;
  private readonly space: CacheSpace;
  private readonly specKeys = new WeakMap<object, string>();
  private readonly priceKeys = new WeakMap<ReplayContext, Map<PolicyVariant, string>>();
  private readonly tableKeys = new WeakMap<PriceTable, string>();
  private readonly variantKeys = new WeakMap<PolicyVariant, string>();

  constructor(
    readonly dir: string,
    private readonly code = engineId(),
  ) {
    this.space = new CacheSpace(dir, 'replay');
  }

  /** Problems met (a damaged entry replayed, a failed write), one line each. */
  get warnings(): readonly string[] {
    return this.space.warnings;
  }

  /** The hash of a conversation's content, to key its units with (`unitKey`): all of it but `source` (where it was read from, which no record holds). */
  conversationKey(c: Conversation): string {
    const { source: _source, ...content } = c;
    return sha256(canon(content));
  }

  /**
   * The key of a unit: the conversation's (from `conversationKey`), the
   * variant's, the run's spec as the unit's chat model sees it (`spec`:
   * `unitSpec` of the canonical `RunSpec`, hashed whole, so every setting of
   * the spec keys the unit), the token counter's id (the tokenizer's files
   * and libraries and the runtime's Unicode version: what this machine
   * counts with, which no setting says) and the prices it can use
   * (`priceKey`).
   */
  unitKey(conversationKey: string, variant: PolicyVariant, ctx: ReplayContext, spec: object): string {
    let v = this.variantKeys.get(variant);
    if (v === undefined) {
      v = sha256(canon({ name: variant.name, policy: variant.policy.id, params: variant.params, module: variant.module ? moduleKey(variant.module) : null }));
      this.variantKeys.set(variant, v);
    }
    let c = this.specKeys.get(spec);
    if (c === undefined) this.specKeys.set(spec, (c = sha256(canon(spec))));
    return this.space.keyOf(this.code, conversationKey, v, c, ctx.tokens.id, this.priceKey(variant, ctx));
  }

  /**
   * The prices a unit depends on: the entries of the models it can price —
   * the chat model, the route and fallback models, and every model a
   * parameter of the variant names (`summaryModel`, `embedModel`, …, resolved
   * with their defaults). A policy module or a pipeline may name models
   * otherwise: for them, the whole table.
   */
  private priceKey(variant: PolicyVariant, ctx: ReplayContext): string {
    let byVariant = this.priceKeys.get(ctx);
    if (!byVariant) this.priceKeys.set(ctx, (byVariant = new Map()));
    let k = byVariant.get(variant);
    if (k !== undefined) return k;
    const table = ctx.prices;
    if (variant.module || variant.policy.id === 'pipeline') {
      k = this.tableKeys.get(table);
      if (k === undefined) this.tableKeys.set(table, (k = sha256(canon({ models: table.models, unpriced: table.unpriced ?? null }))));
    } else {
      const named = Object.values(variant.params).filter((x): x is string => typeof x === 'string' && table.models.has(x));
      const models = [...new Set([ctx.model, ...settingsModels(ctx.spec), ...named])].sort();
      k = sha256(canon(models.map((m) => [m, table.models.get(m) ?? null])));
    }
    byVariant.set(variant, k);
    return k;
  }

  /** A unit's records if the cache has them; a damaged entry is a miss, with a warning. */
  get(key: string): UnitRecords | undefined {
    return this.space.getValue(key, isUnit, 'a unit’s records', 'replaying its unit again');
  }

  /** Stores a unit's records; a failed write is a warning, once per run. */
  put(key: string, records: UnitRecords): void {
    this.space.putValue(key, records);
  }
}
