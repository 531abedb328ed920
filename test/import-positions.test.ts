import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importDataset } from '../src/scenario/import/index.js';
import { IMPORT_FIXTURES, writeInput } from './_import.js';
import { problems } from './_io.js';
import { tempDir } from './_tmp.js';

/**
 * Every importer puts a problem at its line and column, as a scenario file's
 * are: a value of the wrong kind, planted deep in a real-shaped sample
 * (pretty-printed, so the line matters), is named at the place the value
 * starts.
 */

const PLANTED = 987654321;

/** The sample with the value at `path` replaced by the planted number. */
function plant(value: unknown, path: readonly (string | number)[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  expect(at[path[path.length - 1]!], `the sample has a value at ${path.join('.')}`).toBeDefined();
  at[path[path.length - 1]!] = PLANTED;
  return copy;
}

/** The text at a problem's `file:line:col`. */
function textAt(text: string, problem: string): string {
  const m = /^[^:]+:(\d+):(\d+) /.exec(problem);
  expect(m, `a line and column in: ${problem}`).not.toBeNull();
  return text.split('\n')[Number(m![1]) - 1]!.slice(Number(m![2]) - 1);
}

const JSON_DOCUMENTS: { format: string; fixture: string | (() => unknown); path: (string | number)[] }[] = [
  { format: 'locomo', fixture: 'locomo-sample.json', path: [0, 'conversation', 'session_1', 1, 'text'] },
  { format: 'abcd', fixture: 'abcd-sample.json', path: [0, 'original', 1, 1] },
  { format: 'multiwoz', fixture: 'multiwoz-sample.json', path: [0, 'turns', 1, 'utterance'] },
  { format: 'sgd', fixture: 'sgd-sample.json', path: [0, 'turns', 1, 'utterance'] },
  { format: 'swe-agent', fixture: 'mini-swe-agent-sample.traj.json', path: ['messages', 1, 'content'] },
  { format: 'openai', fixture: () => [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }], path: [1, 'content'] },
  { format: 'anthropic', fixture: () => ({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] }), path: ['messages', 1, 'content'] },
];

describe('a problem in an imported JSON document names its line and column', () => {
  it.each(JSON_DOCUMENTS)('$format: at the value that is wrong', ({ format, fixture, path }) => {
    const sample = typeof fixture === 'string' ? JSON.parse(readFileSync(join(IMPORT_FIXTURES, fixture), 'utf8')) : fixture();
    const text = JSON.stringify(plant(sample, path), null, 2);
    const found = problems(() => importDataset(format, writeInput(tempDir(), 'bad.json', text)));
    expect(found.length).toBeGreaterThan(0);
    for (const p of found) expect(textAt(text, p).startsWith(String(PLANTED)), p).toBe(true);
  });

  it.each(['openai', 'anthropic', 'claude-code'])('%s JSON Lines: at the value, on its line', (format) => {
    const lines: Record<string, unknown>[] =
      format === 'claude-code'
        ? readFileSync(join(IMPORT_FIXTURES, 'claude-code-session.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
        : [{ messages: [{ role: 'user', content: 'hi' }] }, { messages: [{ role: 'user', content: 'again' }] }];
    const at = format === 'claude-code' ? lines.findIndex((l) => l.type === 'user') : 1;
    const text = lines.map((l, i) => JSON.stringify(i === at ? plant(l, format === 'claude-code' ? ['message', 'content'] : ['messages', 0, 'content']) : l)).join('\n');
    const found = problems(() => importDataset(format, writeInput(tempDir(), 'bad.jsonl', text)));
    expect(found.length).toBeGreaterThan(0);
    for (const p of found) {
      expect(p.startsWith(`bad.jsonl:${at + 1}:`), p).toBe(true);
      expect(textAt(text, p).startsWith(String(PLANTED)), p).toBe(true);
    }
  });
});
