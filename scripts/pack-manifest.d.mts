/** Types for scripts/pack-manifest.mjs (imported by tests). */
export declare const PREPARE: string;
export declare const INSTALL_SCRIPTS: readonly string[];
export declare function withoutPrepare(text: string): string;
export declare function withPrepare(text: string): string;
