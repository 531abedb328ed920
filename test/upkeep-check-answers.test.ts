import { describe, expect, it } from 'vitest';
import { answerKeyWords, answerWords, holdsAnswer, memoryWords } from '../src/text/answers.js';

/** Whether `memory` holds `answer`, by the rule check-upkeep judges memories by. */
const holds = (memory: string, answer: string) => holdsAnswer(memoryWords(memory), answer);

describe('the words an answer is compared by', () => {
  it('are lower-cased, without punctuation or a possessive', () => {
    expect(answerWords("Caroline's LGBTQ+ support-group, (finally)!")).toEqual(['caroline', 'lgbtq', 'support', 'group', 'finally']);
    expect(answerWords('“Becoming Nicole” — don’t')).toEqual(['becoming', 'nicole', 'dont']);
    expect(answerWords('Zoë in Zürich')).toEqual(['zoë', 'in', 'zürich']);
  });

  it('write number words, ordinals and leading zeros as digits', () => {
    expect(answerWords('two dogs, twenty-one cats, thirty three fish, Ninety')).toEqual(['2', 'dogs', '21', 'cats', '33', 'fish', '90']);
    expect(answerWords('the 7th, the 1st, 22nd and 03rd; 007')).toEqual(['the', '7', 'the', '1', '22', 'and', '3', '7']);
    expect(answerWords('one of them')).toEqual(['1', 'of', 'them']);
  });

  it('read a date the same in every common form', () => {
    const forms = ['7 May 2023', 'May 7, 2023', '2023-05-07', '7 may, 2023', 'May 7th 2023', '07 May 2023'];
    for (const f of forms) expect(new Set(answerWords(f)), f).toEqual(new Set(['7', 'may', '2023']));
    expect(answerWords('Sept. 3, 2023; 3 Sep 2023; jan 2024')).toEqual(['september', '3', '2023', '3', 'september', '2023', 'january', '2024']);
    // Not a date: left as it was.
    expect(answerWords('2023-13-07')).toEqual(['2023', '13', '7']);
  });

  it('keep content words, or every word of an answer that has no other', () => {
    expect(answerKeyWords('The week before 9 June 2023')).toEqual(['week', '9', 'june', '2023']);
    expect(answerKeyWords('her mother')).toEqual(['mother']);
    expect(answerKeyWords('No')).toEqual(['no']);
    expect(answerKeyWords('...')).toEqual([]);
  });
});

describe('holdsAnswer', () => {
  it('holds an answer when every content word of it is in the memory, in any order or form', () => {
    expect(holds('Caroline went to the LGBTQ support group on May 7, 2023.', '7 May 2023')).toBe(true);
    expect(holds('On 2023-05-07 Caroline went to a support group.', 'The support group, 7 May 2023')).toBe(true);
    expect(holds('Melanie has two kids and a dog named Oscar.', '2 kids')).toBe(true);
    expect(holds("Melanie's kids love the beach", 'beach')).toBe(true);
  });

  it('does not hold it when a content word is missing', () => {
    expect(holds('Caroline went to a support group in May 2023.', '7 May 2023')).toBe(false);
    expect(holds('Melanie has kids.', 'two kids')).toBe(false);
    expect(holds('Melanie painted a lake.', 'lake sunrise')).toBe(false);
    // An answer with no words is held by nothing.
    expect(holds('anything at all', '?')).toBe(false);
  });

  it('an answer of stopwords only needs them all', () => {
    expect(holds('No, she did not.', 'No')).toBe(true);
    expect(holds('She did.', 'No')).toBe(false);
  });
});
