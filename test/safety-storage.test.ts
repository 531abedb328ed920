import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { byPolicy, summaryOf } from '../src/engine/summary.js';
import { policiesCsv } from '../src/records/csv.js';
import { STORED_DIMENSIONS } from '../src/upkeep/embedder.js';
import { turn } from './fixtures/report/records.js';
import { csvRows } from './_io.js';
import { conversation, variant } from './_policies.js';

/**
 * Stored bytes at the end of a conversation: UTF-8 bytes of the messages a
 * policy may still send, its summary and fact sheet, plus each vector entry's
 * source text and embedding (1536 dimensions × 4 bytes). The system prompt is
 * configuration, not per-conversation state: not counted.
 */

const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'chars4' });
// Message bytes: "Hi, I am Zoë." 14 (ë is 2 bytes), "Hello Zoë!" 11, "Bye" 3, "See you" 7 — 35 in all.
const tiny = conversation({
  id: 'tiny',
  system: 'Be brief.',
  turns: [
    { user: 'Hi, I am Zoë.', facts: { name: 'Zoë' }, assistant: 'Hello Zoë!' },
    { user: 'Bye', assistant: 'See you' },
  ],
});
const stored = (spec: string) => replay(tiny, variant(spec), ctx).end.storedBytes;

describe('stored bytes per policy, by hand', () => {
  it('full: every message, 35 bytes', () => expect(stored('full')).toBe(35));

  it('window-turns:turns=1: the last exchange only ("Bye", "See you"), 10 bytes', () => expect(stored('window-turns:turns=1')).toBe(10));

  it('window-tokens:budget=5: what could still fit next to the system prompt', () => {
    // chars4: system 2 tokens leaves 3; "See you" 1, "Bye" 1, then "Hello Zoë!" (2) does not fit.
    expect(stored('window-tokens:budget=5')).toBe(10);
  });

  // "Hi, I am Zoë." states "The user is Zoë."; "Hello Zoë!" states nothing.
  it('facts: the messages (35) and the sheet "Known facts: The user is Zoë." (30)', () => expect(stored('facts')).toBe(35 + 30));

  it('retrieval: the recent messages (35) and 4 vector entries, each its text and 1536 × 4 bytes', () => {
    expect(STORED_DIMENSIONS).toBe(1536);
    expect(stored('retrieval')).toBe(35 + 35 + 4 * 6144);
  });

  it('summary: the unfolded messages (10) and the summary', () => {
    const r = replay(tiny, variant('summary:threshold=1,summaryTokens=12'), ctx);
    // Turn 2 folds turn 1: the header (44 chars → 11 tokens) fits 12, " The user is Zoë." (17 chars → 4) would make 15:
    // the statement does not fit a 12-token summary and is dropped.
    expect(r.artifacts.map((a) => [a.kind, a.texts, a.bytes])).toEqual([
      ['transcript', ['Bye', 'See you'], 10],
      ['summary', ['Summary of the conversation so far (turn 1).'], 44],
    ]);
    expect(r.end.storedBytes).toBe(54);
  });
});

describe('policies.csv: mean and p95 over the conversations', () => {
  it('mean rounded to the byte, p95 by nearest rank', () => {
    const row = (scenario: string, policy: string, storedBytes: number) => summaryOf([turn({ scenario, policy, turn: 1 })], [], { zombies: [], storedBytes });
    const rows = [row('a', 'p', 100), row('b', 'p', 200), row('c', 'p', 300), row('d', 'p', 1001), row('a', 'q', 1), row('b', 'q', 2)];
    const policies = byPolicy(rows);
    // p: (100 + 200 + 300 + 1001) / 4 = 400.25 → 400; p95 = the ceil(0.95 × 4) = 4th smallest = 1001. q: 1.5 → 2, p95 2.
    expect(policies.map((p) => [p.policy, p.storedBytesMean, p.storedBytesP95])).toEqual([['p', 400, 1001], ['q', 2, 2]]);
    const columns = 'stored_bytes_mean,stored_bytes_p95,zombie_artifacts,zombie_prompt_turns,zombie_probes,injection_exposure_turns,violations,overflow_probes,latency_p95_ms,model,answered,answer_retention,memory,judged_unsent'.split(',');
    // Then the safety counts (0), no overflow probe, latency p95 0 ms; no answers measured, no memory of its own.
    expect(Object.values(csvRows(policiesCsv({ policies }), columns)[0]!)).toEqual(['400', '1001', '0', '0', '0', '0', '0', '0', '0', 'gpt-4o-mini', '', '', 'none', '']);
  });
});
