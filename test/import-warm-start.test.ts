import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TurnOut } from '../src/scenario/docs.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromFile } from '../src/scenario/load.js';
import { roundsOf, writeInput } from './_import.js';
import { cli } from './_io.js';
import { itShared } from './_shared.js';
import { tempDir } from './_tmp.js';

const tmp = tempDir('ctxsim-warm-');

/** A Claude Code line of one model response (one content block), with its usage as the log writes it. */
const response = (id: string, block: unknown, usage: { read: number; created: number; output: number }) => ({
  type: 'assistant',
  isSidechain: false,
  message: { id, role: 'assistant', model: 'claude-sonnet-4-5', content: [block], usage: { input_tokens: 3, cache_read_input_tokens: usage.read, cache_creation_input_tokens: usage.created, output_tokens: usage.output } },
});
const user = (content: unknown) => ({ type: 'user', isSidechain: false, message: { role: 'user', content } });
const REPLY = 'The bug is in parse_date: it reads the day before the month. Fixed in src/dates.py, line 14.';

/** A session of two calls: a round reading a file, then the reply; the first call read `firstRead` tokens from the cache. */
function session(name: string, firstRead: number) {
  return writeInput(tmp, name, [
    user('Fix the date bug.'),
    response('m1', { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'src/dates.py' } }, { read: firstRead, created: 200, output: 1 }),
    user([{ type: 'tool_result', tool_use_id: 't1', content: 'def parse_date(text):\n    day, month, year = text.split("/")' }]),
    response('m2', { type: 'text', text: REPLY }, { read: firstRead + 200, created: 150, output: 2 }),
  ]);
}

describe('an import records the cache its first call found', () => {
  it('warm_start: the first call’s cache reads, before the turns; the report says so', async () => {
    const { docs, conversations, report } = importDataset('claude-code', session('warm.jsonl', 5000));
    expect(Object.keys(docs[0]!)).toEqual(['id', 'model', 'warm_start', 'turns']);
    expect(docs[0]!.warm_start).toEqual({ cached: 5000 });
    expect(conversations[0]!.warmStart).toBe(5000);
    expect(report.quirks.find((q) => q.key === 'warm-start')).toEqual({
      key: 'warm-start',
      label: 'conversations whose first call found part of its prompt cached, written before it (warm_start: the replay starts with it cached; run --cold-start to start empty)',
      count: 1,
      examples: ['warm 5000'],
    });
    // Written as YAML and read back.
    const dir = tempDir();
    const r = await cli('import', '--format', 'claude-code', join(tmp, 'warm.jsonl'), '--out', dir);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(join(dir, 'warm.yaml'), 'utf8')).toContain('\nwarm_start:\n  cached: 5000\nturns:\n');
    expect(scenarioFromFile(join(dir, 'warm.yaml')).warmStart).toBe(5000);
  });

  it('none when the first call read nothing from the cache, or its bill is not in the log (a later call’s reads may be the session’s own writes)', () => {
    const cold = importDataset('claude-code', session('cold.jsonl', 0));
    expect(cold.docs[0]!.warm_start).toBeUndefined();
    expect(cold.report.quirks.map((q) => q.key)).not.toContain('warm-start');
    const unbilled = writeInput(tmp, 'unbilled.jsonl', [
      user('Fix the date bug.'),
      { type: 'assistant', isSidechain: false, message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'Which one?' }] } },
      user('The one in parse_date.'),
      response('m2', { type: 'text', text: REPLY }, { read: 5000, created: 150, output: 2 }),
    ]);
    expect(importDataset('claude-code', unbilled).docs[0]!.warm_start).toBeUndefined();
  });
});

describe('Claude Code’s output counts are partial', () => {
  it('every usage is marked output_partial; the replies keep the text the log has, which is what ctxsim counts', () => {
    const { docs, conversations } = importDataset('claude-code', session('partial.jsonl', 0));
    const turn = docs[0]!.turns[0] as TurnOut;
    expect(roundsOf(turn)[0]!.usage).toEqual({ input: 203, cached: 0, written: 200, output: 1, output_partial: true });
    expect(turn.usage).toEqual({ input: 353, cached: 200, written: 150, output: 2, output_partial: true });
    expect(turn.assistant).toBe(REPLY);
    expect(conversations[0]!.turns[0]!.assistant).toMatchObject({ content: REPLY, billed: { output: 2, outputPartial: true } });
  });
});

const SAMPLE = 'agent_transcripts_sample';

itShared(`${SAMPLE}/claude-code_sonnet-4-5_subagent-a2898e3.jsonl`, 'the shared Claude Code session starts cold (its first call wrote 13,522 and read none, as its usage.json says), its output counts marked partial', (path) => {
  const usage = JSON.parse(readFileSync(path.replace(/\.jsonl$/, '.usage.json'), 'utf8')) as { calls: { usage: { cache_read_input_tokens: number; output_tokens: number } }[] };
  expect(usage.calls[0]!.usage.cache_read_input_tokens).toBe(0);
  const { docs } = importDataset('claude-code', { path, file: 'a.jsonl', base: dirname(path) });
  expect(docs[0]!.warm_start).toBeUndefined();
  const turn = docs[0]!.turns[0] as TurnOut;
  const billed = [...roundsOf(turn).map((r) => r.usage!), turn.usage!];
  expect(billed.every((u) => u.output_partial === true)).toBe(true);
  expect(billed.map((u) => u.output)).toEqual(usage.calls.map((c) => c.usage.output_tokens));
});

itShared(`${SAMPLE}/mini-swe-agent_deepseek-chat_django-15213.traj.json`, 'the shared mini-swe-agent run starts warm: its first call read 320 tokens DeepSeek had cached (its system prompt, from an earlier task); its output counts are whole', (path) => {
  const { docs } = importDataset('swe-agent', { path, file: 'a.traj.json', base: dirname(path) });
  expect(docs[0]!.warm_start).toEqual({ cached: 320 });
  const turn = docs[0]!.turns[0] as TurnOut;
  expect(roundsOf(turn)[0]!.usage).toEqual({ input: 1533, cached: 320, output: 98 });
  expect(roundsOf(turn).some((r) => r.usage?.output_partial)).toBe(false);
});
