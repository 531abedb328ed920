/** Types for scripts/gen-prices.mjs (imported by tests). */
export declare function snapshot(table: Record<string, unknown>, date?: string): { text: string; models: number; date: string };
