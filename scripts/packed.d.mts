/** Types for scripts/packed.mjs (imported by tests). */
export declare const ROOT: string;
export declare const npm: string;
export declare function installPacked(dir: string): { tarball: string; pkg: string };
export declare function linkDependency(dir: string, name: string): void;
