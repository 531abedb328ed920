import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './_shared.js';
import { MAIN } from './_built.js';
import { tempDir } from './_tmp.js';

/**
 * What the tests of hostile policy modules share: the built CLI run
 * asynchronously (a hang must not block the runner's own timers), a module
 * of the documented shape that misbehaves where a test says, and a folder
 * to hold it.
 */

export const NOAH = join(ROOT, 'scenarios', 'noah-amnesia.yaml');

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** Runs the built CLI (under Node's `node` flags); `during` is called once it runs (with the child, to signal it). A run still going after 90 s is killed: a hang fails the test, it does not stop the suite. */
export function ctxsim(args: readonly string[], cwd?: string, during?: (child: ReturnType<typeof spawn>) => void, node: readonly string[] = []): Promise<Ran> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...node, MAIN, ...args], { ...(cwd && { cwd }), env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const hang = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code, signal) => {
      clearTimeout(hang);
      done({ code, signal, out, err });
    });
    during?.(child);
  });
}

/** A module of the documented shape whose `prompt` runs `body` first (given `pending`, `info`); `top` goes before it, at the module's top level. */
export function moduleText(body: string, top = ''): string {
  return `${top}
export default {
  id: 'hostile',
  describe: 'a policy that misbehaves',
  params: {},
  start(conversation) {
    const head = [...conversation.system];
    const kept = [];
    return {
      prompt(pending, info) { ${body}; return { messages: [...head, ...kept, ...pending], overBudget: false, upkeep: [], stablePrefix: head.length }; },
      commit(exchange) { kept.push(...exchange); return []; },
      forget() { return []; },
      artifacts() { return []; },
    };
  },
};
`;
}

/** Writes the module into a fresh folder: the folder and the module's path. */
export function project(text: string): { dir: string; file: string } {
  const dir = tempDir();
  const file = join(dir, 'hostile.mjs');
  writeFileSync(file, text);
  return { dir, file };
}
