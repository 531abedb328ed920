import { ScenarioError } from '../src/errors.js';
import type { IO } from '../src/cli/_io.js';

/** An IO that records what a command prints. */
export function capture(): IO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    isTTY: false,
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
  };
  return io;
}

/** The problems `fn` throws as a ScenarioError, one line each (none when it does not throw). */
export function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n');
    throw e;
  }
  return [];
}

/** The problems an async `fn` rejects with as a ScenarioError, one line each (none when it resolves). */
export async function asyncProblems(fn: () => Promise<unknown>): Promise<string[]> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n');
    throw e;
  }
  return [];
}
