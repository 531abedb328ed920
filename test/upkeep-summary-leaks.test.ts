import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../src/tokens/counter.js';
import type { Message } from '../src/types.js';
import { summarize, type SummarizeRequest } from '../src/upkeep/summarizer.js';

/**
 * A fact value in a summary's free text (header, topic sentences, padding)
 * would be a fact the summary did not keep: that text is dropped. The check
 * reads the free text normalized as a whole, so a value is found however the
 * sentences hold it: inside one, across two, or behind whitespace that
 * normalizing collapses.
 */

const tokens = new TokenCounter('chars4');

/** One exchange: a user message, an optional tool call, a reply. */
function exchange(turn: number, user: string, reply: string, tool?: string): Message[] {
  const call: Message[] = tool ? [{ role: 'assistant', content: '', toolCalls: [{ id: `c${turn}`, name: tool, arguments: '{}' }], turn }] : [];
  const result: Message[] = tool ? [{ role: 'tool', content: 'done', toolCallId: `c${turn}`, name: tool, turn }] : [];
  return [{ role: 'user', content: user, turn }, ...call, ...result, { role: 'assistant', content: reply, turn }];
}

const request = (folded: Message[], hidden: string[]): SummarizeRequest => ({
  tokens,
  random: () => 0.5,
  model: 'gpt-4o-mini',
  summaryTokens: 200,
  keep: 1,
  folded,
  stated: [],
  hidden,
});

const content = (folded: Message[], hidden: string[]) => summarize(request(folded, hidden)).summary.message.content;

describe('summary free text never states a fact value', () => {
  const calm = [...exchange(1, 'Where is my parcel?', 'It ships tomorrow.'), ...exchange(2, 'Can I change the address?', 'Yes, send it over.')];

  it('keeps topics and padding when no value is in them', () => {
    const text = content(calm, ['SE-10423']);
    expect(text).toContain('In turn 1 the user asked about parcel');
    expect(text).toContain('The conversation stayed polite throughout.');
  });

  it('drops topics and padding when a tool name holds a value', () => {
    const text = content([...calm, ...exchange(3, 'Track it please.', 'Found it.', 'track_SE-10423')], ['SE-10423']);
    expect(text).not.toContain('In turn');
    expect(text).not.toContain('The conversation stayed polite');
    expect(text.startsWith('Summary of the conversation so far (turns 1-3).')).toBe(true);
  });

  it('finds a value behind whitespace that normalizing collapses', () => {
    const text = content([...calm, ...exchange(3, 'Track it please.', 'Found it.', 'order\tSE-10423')], ['Order SE-10423']);
    expect(text).not.toContain('In turn');
  });

  it('finds a value that runs from one sentence into the next', () => {
    // "In turn 1 the user wrote briefly." is followed by "In turn 2 …": the value spans the two.
    const folded = [...exchange(1, 'ok', 'sure'), ...exchange(2, 'Where is my parcel?', 'It ships tomorrow.')];
    expect(content(folded, ['SE-10423'])).toContain('In turn 1 the user wrote briefly. In turn 2 the user asked about parcel');
    expect(content(folded, ['briefly. In turn 2'])).not.toContain('In turn');
  });
});
