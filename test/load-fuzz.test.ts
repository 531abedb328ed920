import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

/**
 * Random scenario and study documents — wrong types, unknown keys, huge
 * numbers, empty strings, prototype names, deep nesting — through the CLI:
 * every one is a run (exit 0) or a list of located problems (exit 2), never a
 * stack trace or an internal error.
 */
const RUNS = { seed: 7, numRuns: 40 };

const NAMES = ['__proto__', 'constructor', 'toString', 'prototype', 'hasOwnProperty', '', ' ', 'x', 'name', 'email'];
const KEYS = [
  ...NAMES,
  'id', 'title', 'system', 'turns', 'user', 'assistant', 'facts', 'probe', 'tools', 'gap', 'injection', 'role', 'content', 'forget', 'call', 'args', 'result',
  'scenarios', 'policies', 'model', 'prices', 'route', 'fallback', 'latency', 'seed', 'out', 'cache', 'cacheTtl', 'tokenizer', 'rules', 'gate',
  'generate', 'import', 'profile', 'count', 'format', 'path', 'light', 'strong', 'rate', 'budget', 'turns', 'summaryModel', 'embedModel',
];
const STRINGS = [...NAMES, 'hi', 'user', 'assistant', 'full', 'window-turns', 'summary:summaryModel=nope', 'gpt-4o-mini', 'support', 'locomo', '30s', '1e400', '-5m', 'x'.repeat(300), 'a\u001b[31mb\nc', '*.yaml', '../', '{', '- [', '&a', '*a'];
const NUMBERS = [0, 1, 2, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 100_001, 1e21, 0.1];

const scalar = fc.oneof(fc.constantFrom(...STRINGS), fc.constantFrom(...NUMBERS), fc.boolean(), fc.constant(null), fc.string({ maxLength: 8 }));

/** A YAML-ish value: scalars, lists and mappings with known and odd keys, a few levels deep. */
const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('v'), { maxKeys: 5 }),
  ),
})).v;

/** A deeply nested list (a few hundred levels): parsing and validation must not overflow. */
const deep = fc.integer({ min: 50, max: 400 }).map((n) => {
  let v: unknown = 'hi';
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { user: v };
  return v;
});

const turn = fc.oneof(
  fc.record({ user: fc.constantFrom("Hi, I'm Ana", 'hi', ''), facts: fc.option(fc.dictionary(fc.constantFrom(...NAMES), fc.constantFrom('Ana', 'Anna', '', 'hi')), { nil: undefined }), probe: fc.option(fc.array(fc.constantFrom(...NAMES), { maxLength: 2 }), { nil: undefined }) }, { requiredKeys: ['user'] }),
  fc.record({ role: fc.constantFrom('user', 'assistant', 'bot'), content: scalar }),
  fc.record({ forget: fc.array(fc.constantFrom(...NAMES), { maxLength: 2 }) }),
  value,
  deep,
);

const scenarioDoc = fc.oneof(
  fc.record({ id: fc.oneof(fc.constantFrom('a', 'b-1', 'Bad', ''), scalar), turns: fc.oneof(fc.array(turn, { maxLength: 4 }), value) }, { requiredKeys: [] }),
  fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 }),
  value,
);

const policy = fc.oneof(fc.constantFrom('full', 'window-turns:turns=2', 'summary:summaryModel=nope', 'nope', '__proto__'), fc.dictionary(fc.constantFrom('full', 'window-turns', 'facts', '__proto__', 'constructor'), value, { maxKeys: 1 }), value);
const source = fc.oneof(
  fc.constantFrom('a.yaml', '*.yaml', 'none/*.yaml', ''),
  fc.record({ generate: fc.record({ profile: fc.constantFrom('support', 'coding', 'nope', '__proto__'), count: fc.constantFrom(0, 1, 2, 100_001, 1e308, -1, 1.5) }, { requiredKeys: [] }) }),
  fc.record({ import: fc.record({ format: fc.constantFrom('locomo', 'openai', 'nope', 'constructor'), path: fc.constantFrom('a.yaml', 'missing.json', '') }, { requiredKeys: [] }) }),
  value,
);
const studyDoc = fc.oneof(
  fc.record(
    {
      scenarios: fc.oneof(fc.array(source, { minLength: 1, maxLength: 3 }), value),
      policies: fc.oneof(fc.array(policy, { minLength: 1, maxLength: 3 }), value),
      model: fc.oneof(fc.constantFrom('gpt-4o-mini', 'gpt-4o-minii', '__proto__', ''), scalar),
      seed: fc.oneof(fc.constantFrom(...NUMBERS), scalar),
      route: value,
      fallback: value,
      prices: fc.constantFrom('builtin', 'missing.json', ''),
    },
    { requiredKeys: ['scenarios'] },
  ),
  fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 6 }),
);

const text = (doc: unknown, json: boolean) => (json ? JSON.stringify(doc) ?? 'null' : stringify(doc, { aliasDuplicateObjects: false }));

/** A stderr line names its file: `ctxsim: FILE:line:col …` or `ctxsim: FILE: …` / `ctxsim: FILE path: …`. */
function located(line: string, dir: string): boolean {
  return line.startsWith(`ctxsim: ${dir}/`) || line.startsWith(`ctxsim: ${dir}:`);
}

async function check(file: string, dir: string, args: string[]): Promise<void> {
  const io = capture();
  const code = await runMain([...args, '--out', '-', '--no-token-cache', '--quiet'], io);
  expect([0, 2], io.stderr).toContain(code);
  expect(io.stderr).not.toContain('    at ');
  expect(io.stderr).not.toContain('internal error');
  if (code === 2) {
    const lines = io.stderr.split('\n').filter(Boolean);
    expect(lines.length, file).toBeGreaterThan(0);
    for (const l of lines) expect(located(l, dir), l).toBe(true);
  }
}

describe('random documents never crash the loader', () => {
  it('scenario files: exit 0 or 2, every problem located', async () => {
    const dir = tempDir();
    await fc.assert(
      fc.asyncProperty(scenarioDoc, fc.boolean(), async (doc, json) => {
        const file = join(dir, json ? 's.json' : 's.yaml');
        writeFileSync(file, text(doc, json));
        await check(file, dir, ['run', '--scenario', file, '--policy', 'full']);
      }),
      RUNS,
    );
  });

  it('study files: exit 0 or 2, every problem located', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.yaml'), 'id: a\nturns:\n  - user: hi\n');
    await fc.assert(
      fc.asyncProperty(studyDoc, fc.boolean(), async (doc, json) => {
        const file = join(dir, json ? 'study.json' : 'study.yaml');
        writeFileSync(file, text(doc, json));
        // --policy replaces the study's policies only after they are checked: a run that passes stays short.
        await check(file, dir, ['run', file, '--policy', 'full']);
      }),
      RUNS,
    );
  });
});
