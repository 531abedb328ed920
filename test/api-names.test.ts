import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './_shared.js';

/** One name per meaning: no two files of src/ export the same name (so an import says which thing it means). */

const EXPORT = /^export (?:async )?(?:function\*?|const|let|class|interface|type|enum|abstract class) ([A-Za-z_$][\w$]*)/gm;

/** Every exported declaration's name, by file (a name declared twice in one file, as overloads are, counts once). */
function exportedNames(files: readonly { file: string; text: string }[]): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const { file, text } of files) {
    for (const name of new Set([...text.matchAll(EXPORT)].map((m) => m[1]!))) byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  return byName;
}

function sources(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return p.endsWith('.ts') ? [{ file: relative(ROOT, p), text: readFileSync(p, 'utf8') }] : [];
  });
}

describe('exported names', () => {
  it('finds a name two files export, and not overloads in one file', () => {
    const names = exportedNames([
      { file: 'a.ts', text: 'export function f(x: number): number;\nexport function f(x: string): string;\nexport const g = 1;\n' },
      { file: 'b.ts', text: 'export interface g {}\nexport type h = 1;\n' },
    ]);
    expect(names.get('f')).toEqual(['a.ts']);
    expect(names.get('g')).toEqual(['a.ts', 'b.ts']);
  });

  it('are unique across src/', () => {
    const twice = [...exportedNames(sources(join(ROOT, 'src')))].filter(([, files]) => files.length > 1);
    expect(twice.map(([name, files]) => `${name}: ${files.join(', ')}`)).toEqual([]);
  });
});
