import { describe, expect, it } from 'vitest';
import { naming } from '../src/output/files.js';

/** A failed write to an open file (a full disk) names no file; ctxsim makes it name the output. */

const fail = (e: Error) => () => {
  throw e;
};

describe('naming', () => {
  it('returns what the write returns', () => {
    expect(naming('reports', () => 3)).toBe(3);
  });

  it('makes a write error without a path name the output', () => {
    const e = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    expect(() => naming('reports', fail(e))).toThrow(e);
    expect((e as NodeJS.ErrnoException).path).toBe('reports');
  });

  it('leaves an error that names its file, and one that is not a system error, as they are', () => {
    const named = Object.assign(new Error('EACCES'), { code: 'EACCES', syscall: 'open', path: 'reports/turns.csv' });
    expect(() => naming('reports', fail(named))).toThrow(named);
    expect(named.path).toBe('reports/turns.csv');
    const plain = new Error('a bug');
    expect(() => naming('reports', fail(plain))).toThrow(plain);
    expect((plain as NodeJS.ErrnoException).path).toBeUndefined();
  });
});
