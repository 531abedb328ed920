/** Types for scripts/gen-prices.mjs (imported by tests). */
export declare const CORRECTIONS: { source: string; entries: Record<string, Record<string, [number, number]>> };
export declare function snapshot(table: Record<string, unknown>, date?: string): { text: string; models: number; date: string; corrected: string[] };
