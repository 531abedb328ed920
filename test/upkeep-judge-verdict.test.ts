import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { defaultUpkeep, upkeepFingerprint } from '../src/recording/upkeep.js';
import { judgedYes, judgeRequest, DEFAULT_PROMPTS } from '../src/upkeep/prompts.js';

/**
 * The judge's request and its verdict, and how a judge changes the upkeep
 * fingerprint, in this process (test/upkeep-judge.test.ts records and
 * replays a judge through the command line).
 */

const JUDGE = 'gpt-4o';

describe('the judge’s request and verdict', () => {
  it('puts the question, value and reply into the prompt in one pass, as one user message', () => {
    const r = judgeRequest(JUDGE, 'Where do I live?', 'Elm {value} Street', 'You live on {question} Street Elm', 'Q={question} V={value} R={reply}');
    expect(r).toEqual({ kind: 'judge', model: JUDGE, messages: [{ role: 'user', content: 'Q=Where do I live? V=Elm {value} Street R=You live on {question} Street Elm' }], maxTokens: 10 });
    expect(judgeRequest(JUDGE, 'q', 'v', 'r', DEFAULT_PROMPTS.judge).messages[0]!.content).toMatch(/this value: v\?[\s\S]*Question: q\n\nAnswer: r$/);
  });

  it('is yes when the first word is yes, in any case and punctuation; anything else is no', () => {
    for (const yes of ['yes', 'Yes.', 'YES, it does', '  "Yes"', '**Yes**\nbecause']) expect(judgedYes(yes), yes).toBe(true);
    for (const no of ['no', 'No.', 'Yesterday', 'yesno', 'I think yes', '', 'Maybe', 'oui']) expect(judgedYes(no), no).toBe(false);
  });
});

describe('the fingerprint', () => {
  const study = { policies: [], seed: 1, models: ['gpt-4o-mini'], tokenizer: 'auto', prices: 'builtin' };
  const run = { upkeep: { recorded: { entries: [] }, answers: true }, cassette: { file: 'c.jsonl', recordCommand: '' } };

  it('names the judge after answers; custom upkeep prompts hash as they did before there was a judge prompt', () => {
    const upkeep = { ...defaultUpkeep('/tmp'), mode: 'replay' as const };
    expect(upkeepFingerprint({ ...study, upkeepSource: upkeep }, run)).toMatch(/ answers$/);
    expect(upkeepFingerprint({ ...study, upkeepSource: upkeep }, { ...run, upkeep: { ...run.upkeep, judge: JUDGE } })).toMatch(/ answers judge gpt-4o$/);
    const prompts = { ...DEFAULT_PROMPTS, summary: 'Summarize in {summaryTokens} tokens.' };
    const { judge: _, ...three } = prompts;
    const before = createHash('sha256').update(JSON.stringify(three)).digest('hex').slice(0, 12);
    expect(upkeepFingerprint({ ...study, upkeepSource: { ...upkeep, mode: 'simulate', prompts } }, { upkeep: undefined })).toBe(`simulated prompts sha256:${before}`);
    expect(upkeepFingerprint({ ...study, upkeepSource: { ...upkeep, mode: 'simulate', prompts: { ...DEFAULT_PROMPTS, judge: 'Yes or no: {value} in {reply}?' } } }, { upkeep: undefined })).toMatch(/^simulated prompts sha256:/);
    expect(upkeepFingerprint({ ...study, upkeepSource: { ...upkeep, mode: 'simulate' } }, { upkeep: undefined })).toBeUndefined();
  });
});
