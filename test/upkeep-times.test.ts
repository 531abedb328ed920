import { describe, expect, it } from 'vitest';
import { dateIn, formatDay, headerDate, resolveTimes } from '../src/upkeep/times.js';

const day = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d) / 86_400_000;
const MAY_8 = day(2023, 5, 8); // a Monday

describe('dateIn and formatDay', () => {
  it('reads a whole date in each written form', () => {
    for (const text of ['8 May, 2023', 'May 8, 2023', '2023-05-08', '8 May 2023', 'the 8th of May 2023', 'May 8th 2023', 'on 8 may 2023', 'Mon, 8 May 2023 at noon']) {
      expect(dateIn(text), text).toBe(MAY_8);
    }
    expect(dateIn('Sept. 3, 2021')).toBe(day(2021, 9, 3));
    expect(formatDay(MAY_8)).toBe('8 May 2023');
    expect(formatDay(day(2021, 9, 3))).toBe('3 September 2021');
  });

  it('reads no date that is not whole, or not a day', () => {
    expect(dateIn('May 2023')).toBeUndefined();
    expect(dateIn('8 May')).toBeUndefined();
    expect(dateIn('31 February 2023')).toBeUndefined();
    expect(dateIn('2023-13-01')).toBeUndefined();
  });
});

describe('headerDate', () => {
  it('reads a session’s date line, the last of a message', () => {
    expect(headerDate('DATE: 1:56 pm on 8 May, 2023')).toBe(MAY_8);
    expect(headerDate('[8 May 2023]\nHi Mel!')).toBe(MAY_8);
    expect(headerDate('Session 2, 8 May 2023\nhi\nDATE: 9 May 2023')).toBe(MAY_8 + 1);
  });

  it('reads no date in a sentence, a long line or a code block', () => {
    expect(headerDate('Your plan renews on 2025-03-12.')).toBeUndefined();
    expect(headerDate(`We talked about it at length on 8 May 2023 and then again later.`)).toBeUndefined();
    expect(headerDate('```markdown\n## [2.4.0] - 2024-05-21\n```')).toBeUndefined();
    expect(headerDate('no date here')).toBeUndefined();
  });
});

describe('resolveTimes', () => {
  it('writes a day after "on", unless a preposition is there already', () => {
    expect(resolveTimes('Caroline went to a support group yesterday.', MAY_8)).toBe('Caroline went to a support group on 7 May 2023.');
    expect(resolveTimes('Melanie has been painting since yesterday.', MAY_8)).toBe('Melanie has been painting since 7 May 2023.');
    expect(resolveTimes('She runs tomorrow.', MAY_8)).toBe('She runs on 9 May 2023.');
    expect(resolveTimes('She ran today and this morning.', MAY_8)).toBe('She ran on 8 May 2023 and on 8 May 2023.');
  });

  it('writes a weekday, a week or a weekend relative to the day', () => {
    expect(resolveTimes('She ran last Saturday.', MAY_8)).toBe('She ran the Saturday before 8 May 2023.');
    expect(resolveTimes('She flies next friday.', MAY_8)).toBe('She flies the Friday after 8 May 2023.');
    expect(resolveTimes('She flies next week.', MAY_8)).toBe('She flies the week after 8 May 2023.');
    expect(resolveTimes('She camped last weekend.', MAY_8)).toBe('She camped the weekend before 8 May 2023.');
    expect(resolveTimes('She camps this weekend.', MAY_8)).toBe('She camps the weekend of 8 May 2023.');
  });

  it('writes a month or a year, across a year boundary', () => {
    expect(resolveTimes('She moved last month.', MAY_8)).toBe('She moved April 2023.');
    expect(resolveTimes('She moves next month.', MAY_8)).toBe('She moves June 2023.');
    expect(resolveTimes('She moved last month.', day(2024, 1, 15))).toBe('She moved December 2023.');
    expect(resolveTimes('She moves next month.', day(2023, 12, 3))).toBe('She moves January 2024.');
    expect(resolveTimes('She painted a lake sunrise last year.', MAY_8)).toBe('She painted a lake sunrise 2022.');
    expect(resolveTimes('She graduates next year.', MAY_8)).toBe('She graduates 2024.');
  });

  it('keeps "ago" and says before which day', () => {
    expect(resolveTimes('She moved here two years ago.', MAY_8)).toBe('She moved here two years ago (before 8 May 2023).');
    expect(resolveTimes('She started 3 weeks ago.', MAY_8)).toBe('She started 3 weeks ago (before 8 May 2023).');
    expect(resolveTimes('She left a few days ago.', MAY_8)).toBe('She left a few days ago (before 8 May 2023).');
  });

  it('leaves a sentence with no relative time as it is', () => {
    expect(resolveTimes('She moved to Lisbon on 2023-06-01.', MAY_8)).toBe('She moved to Lisbon on 2023-06-01.');
  });
});
