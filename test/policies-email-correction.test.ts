import { describe, expect, it } from 'vitest';
import { replay } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { fixture, variant } from './_policies.js';

/*
 * test/fixtures/email-correction.yaml: email kavya@old.example in turn 2, corrected to kavya@new.example
 * in turn 3; turn 5 mentions the old address again; turn 12 asks for the email.
 */
const conversation = fixture('email-correction.yaml');
const ctx = replayContext({ seed: 42, model: 'gpt-4o-mini', tokenizer: 'auto' });
const probe = (spec: string) => {
  const p = replay(conversation, variant(spec), ctx).probes[0]!;
  return [p.outcome, p.source, p.ageTurns];
};

describe('an email correction', () => {
  it('is retained under facts: the later value replaced the earlier one in the sheet', () => {
    expect(probe('facts')).toEqual(['retained', 'facts', 9]);
  });

  it('is retained under summary-buffer: the summary states the latest value', () => {
    // keepRecent 4, batch 4: turn 9 folds turns 1-4 (email → kavya@new.example); turn 12 sends summary + turns 5-11.
    expect(probe('summary-buffer')).toEqual(['retained', 'summary', 9]);
  });

  it('can be stale under a window that kept only the old address', () => {
    // window of 7 exchanges at turn 12: turns 5-11, where turn 5 mentions only kavya@old.example.
    expect(probe('window-turns:turns=7')).toEqual(['stale', 'window', 9]);
    expect(probe('window-turns:turns=3')).toEqual(['missing', 'none', 9]);
    expect(probe('full')).toEqual(['retained', 'window', 9]);
  });
});
