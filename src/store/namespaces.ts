/**
 * Every cache of ctxsim, declared once. A namespace is a folder of the cache
 * folder that holds one kind of entry; `ctxsim cache info|clear`, the size
 * bound and the wording of the caches' warnings follow from this list. A new
 * cache is one line here and a `CacheSpace` opened on it (see store.ts and
 * ARCHITECTURE.md, "How to add a cache").
 */
export const NAMESPACES = {
  /** The records of each unit of work (scenario × model × policy variant), by a key of everything they depend on (engine/replay-cache.ts). */
  replay: { label: 'replay cache', holds: 'replayed units' },
  /** Rendered charts, SVG and PNG, by their spec and renderers (output/chart-store.ts). */
  charts: { label: 'chart cache', holds: 'rendered charts' },
  /** Token counts, one sorted entry per counter, merged under the entry's lock (tokens/token-cache.ts). */
  tokens: { label: 'token cache', holds: 'token counts' },
  /** What the simulated memory read of each text, one entry per engine version, merged under its lock (upkeep/readings.ts). */
  readings: { label: 'readings cache', holds: 'texts read' },
} as const satisfies Record<string, { label: string; holds: string }>;

/** A namespace's name: its folder in the cache folder. */
export type NamespaceName = keyof typeof NAMESPACES;

/** The namespaces in the order `ctxsim cache info` lists them. */
export const NAMESPACE_NAMES = Object.keys(NAMESPACES) as NamespaceName[];
