import { spawn } from 'node:child_process';
import { closeSync, copyFileSync, cpSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { NamespaceName } from '../src/store/namespaces.js';
import { ROOT, sharedData, skipReason } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * The commands the docs show with their output print that output.
 *
 * In the pages of PAGES, a fenced block whose first line starts with `$ ` is
 * a terminal session (indented in a list item too: its lines are read, and
 * rewritten, at the fence's indent): each `$ ` line is a command, and the lines under it, up
 * to the next `$ ` line, are what it prints, stdout and stderr together as a
 * terminal shows them. The commands run in the page's order in one fresh
 * folder, each once in its own `sh` (pipes work; variables and `cd` do not
 * carry over), `npx ctxsim` being the built CLI (dist/: `npm run build` first).
 * A command must exit 0 unless the next one is `echo $?`, which prints its
 * code. ```sh blocks (installing, `mkdir`) are not run.
 *
 * The files a page has its reader write come from the page's own blocks,
 * marked by a comment on the line before the block:
 *
 *   <!-- docs-outputs: write PATH -->                        the block is the file PATH
 *   <!-- docs-outputs: insert into PATH before "LINE" -->    its lines go before that line of PATH
 *   <!-- docs-outputs: shared FILE -->                       (no block) ../shared/data/FILE is copied
 *                                                            into the folder; absent, the page is skipped
 *   <!-- docs-outputs: copy PATH -->                         (no block) the repository's file or folder PATH
 *                                                            is copied to PATH in the folder (the shipped
 *                                                            scenarios, a test fixture a page runs)
 *
 * Documented and printed output are compared line by line after NORMALISE,
 * and nothing else is loosened. A difference fails naming the page's line.
 *
 * When an output changes on purpose, rewrite the pages' output lines in place:
 *
 *   npm run build && CTXSIM_UPDATE_DOCS=1 npx vitest run test/docs-outputs.test.ts
 *
 * then read the diff: the prose around a block may quote its figures.
 */

const PAGES = ['README.md', 'docs/getting-started.md', 'docs/agents.md', 'docs/policies.md', 'docs/cost-model.md', 'docs/reports.md'];
const UPDATE = !!process.env.CTXSIM_UPDATE_DOCS && process.env.CTXSIM_UPDATE_DOCS !== '0';
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
/** Longest a command may take (a CLI start is about a second, the default study several). */
const COMMAND_MS = 120_000;

/**
 * What differs between the reader's terminal and this test's folder, made the
 * same on both sides. These outputs print no wall-clock time (`p95 s` is
 * modelled); one that does needs a rule here.
 */
const NORMALISE: readonly ((lines: string[], dir: string) => string[])[] = [
  // A terminal redraws the progress line `[i/n] scenario` in place: only the last, `[n/n]`, stays.
  (lines) => lines.filter((l) => !/^\[\d+\/\d+\] /.test(l) || /^\[(\d+)\/\1\] /.test(l)),
  // A rerun of what the reader ran before says how much the replay cache served (check: and from where).
  (lines) => lines.filter((l) => !/^replay cache: \d+ of \d+ units served(, \d+ replayed| from .*, \d+ replayed; the gate trusts that folder .*)$/.test(l)),
  // The folder the commands run in is the reader's own: its absolute path reads `$PWD`.
  (lines, dir) => lines.map((l) => l.replaceAll(realpathSync(dir), '$PWD').replaceAll(dir, '$PWD')),
];

/** Lines with every NORMALISE rule applied, in order. */
function normalise(lines: readonly string[], dir: string): string[] {
  return NORMALISE.reduce((ls, rule) => rule(ls, dir), [...lines]);
}

interface Command {
  /** The command, without `$ `. */
  cmd: string;
  /** Its page line (1-based). */
  line: number;
  /** The page's lines of its output: [from, to) (0-based). */
  from: number;
  to: number;
  /** The indent of its block (a block in a list item), which its lines are read and rewritten at. */
  indent: string;
}

type Step =
  | { kind: 'write'; path: string; text: string; line: number }
  | { kind: 'insert'; path: string; before: string; text: string; line: number }
  | { kind: 'shared'; file: string; line: number }
  | { kind: 'copy'; path: string; line: number }
  | { kind: 'session'; commands: Command[] };

const MARKER = /^<!-- docs-outputs: (.*) -->$/;
const FENCE = /^( *)(`{3,}|~{3,})/;

/** A line of a block indented by `indent`, without it. */
const dedent = (line: string, indent: string) => (line.startsWith(indent) ? line.slice(indent.length) : line);

/** The fenced block that opens at `start`: its lines (without its indent), the index of its closing fence, its indent. */
function blockAt(lines: readonly string[], start: number): { body: string[]; end: number; indent: string } {
  const [, indent, fence] = FENCE.exec(lines[start]!)!;
  let end = start + 1;
  while (end < lines.length && !lines[end]!.startsWith(indent! + fence!)) end++;
  return { body: lines.slice(start + 1, end).map((l) => dedent(l, indent!)), end, indent: indent! };
}

/** A session block's commands, each with the lines of its output. */
function sessionCommands(lines: readonly string[], start: number, end: number, indent: string): Command[] {
  const commands: Command[] = [];
  for (let i = start + 1; i < end; i++) {
    const last = commands[commands.length - 1];
    const line = dedent(lines[i]!, indent);
    if (line.startsWith('$ ')) commands.push({ cmd: line.slice(2), line: i + 1, from: i + 1, to: i + 1, indent });
    else if (last) last.to = i + 1;
  }
  return commands;
}

/** What a marker asks for, with the block after it; a marker that reads otherwise fails naming its line. */
function markerStep(page: string, lines: readonly string[], i: number, what: string): Step {
  const where = `${page}:${i + 1}`;
  const shared = /^shared (\S+)$/.exec(what);
  if (shared) return { kind: 'shared', file: shared[1]!, line: i + 1 };
  const copy = /^copy (\S+)$/.exec(what);
  if (copy) return { kind: 'copy', path: copy[1]!, line: i + 1 };
  if (!FENCE.test(lines[i + 1] ?? '')) throw new Error(`${where}: a docs-outputs marker that writes a file goes on the line before a fenced block`);
  const text = `${blockAt(lines, i + 1).body.join('\n')}\n`;
  const write = /^write (\S+)$/.exec(what);
  if (write) return { kind: 'write', path: write[1]!, text, line: i + 1 };
  const insert = /^insert into (\S+) before "(.*)"$/.exec(what);
  if (insert) return { kind: 'insert', path: insert[1]!, before: insert[2]!, text, line: i + 1 };
  throw new Error(`${where}: unknown docs-outputs marker "${what}" (write PATH, insert into PATH before "LINE", shared FILE, copy PATH)`);
}

/** A page's steps, in its order. */
function pageSteps(page: string, lines: readonly string[]): Step[] {
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    const what = MARKER.exec(lines[i]!)?.[1];
    if (what !== undefined) steps.push(markerStep(page, lines, i, what));
    if (!FENCE.test(lines[i]!)) continue;
    const { body, end, indent } = blockAt(lines, i);
    if (body[0]?.startsWith('$ ')) steps.push({ kind: 'session', commands: sessionCommands(lines, i, end, indent) });
    i = end;
  }
  return steps;
}

/** `sh` runs `npx ctxsim` as the built CLI, and nothing else through npx. */
const NPX = 'npx() { if [ "$1" = ctxsim ]; then shift; "$DOCS_NODE" "$DOCS_CLI" "$@"; else echo "docs-outputs: only npx ctxsim runs here" >&2; return 127; fi; }';

/** The environment of a reader's shell: none of the suite's settings for ctxsim, no CI runner's; the user's cache folder one in `home` (fresh but for what `seedCaches` put there), as on a machine that never replayed these runs. */
function readerEnv(home: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CTXSIM_') && !k.startsWith('GITHUB_')));
  return { ...env, XDG_CACHE_HOME: join(home, 'cache'), XDG_STATE_HOME: join(home, 'state'), DOCS_NODE: process.execPath, DOCS_CLI: CLI };
}

/**
 * Runs one command in `dir` with `$?` set to `previous`: its exit code and
 * what it printed. stdout and stderr share one file (`file`, outside `dir`),
 * so their lines keep the order they were written in, as on a terminal.
 */
async function runCommand(cmd: string, dir: string, previous: number, file: string): Promise<{ code: number; lines: string[] }> {
  const fd = openSync(file, 'w');
  const code = await new Promise<number>((done, fail) => {
    const child = spawn('sh', ['-c', `${NPX}\n(exit ${previous})\n${cmd}`], { cwd: dir, env: readerEnv(dirname(file)), stdio: ['ignore', fd, fd], timeout: COMMAND_MS });
    child.on('error', fail);
    child.on('close', (c, signal) => (c === null ? fail(new Error(`\`${cmd}\` was stopped by ${signal}`)) : done(c)));
  });
  closeSync(fd);
  const text = readFileSync(file, 'utf8');
  return { code, lines: text === '' ? [] : text.replace(/\n$/, '').split('\n') };
}

/**
 * The memo caches of ctxsim (namespaces of its cache folder) that no output
 * depends on, only the time it takes: token counts, what the simulated
 * memory read of a text, rendered charts. The pages share them (each page
 * starts with what the pages before it stored, so a text is tokenized and a
 * chart rendered once for all of them); the replay cache is each page's own,
 * so every page's runs replay their units as a reader's first runs do.
 */
const SHARED_CACHES = ['tokens', 'readings', 'charts'] as const satisfies readonly NamespaceName[];
const seeds = tempDir();

/** Copies the shared caches the pages before stored into a page's cache folder (`home`'s), or, `back`, that page's into the store for the next. */
function seedCaches(home: string, back = false): void {
  for (const space of SHARED_CACHES) {
    const [from, to] = [join(seeds, space), join(home, 'cache', 'ctxsim', space)];
    const [src, dest] = back ? [to, from] : [from, to];
    if (existsSync(src)) cpSync(src, dest, { recursive: true });
  }
}

/** Writes or edits a file the page has its reader write. */
function applyFile(step: Extract<Step, { kind: 'write' | 'insert' | 'shared' | 'copy' }>, dir: string, where: string): void {
  if (step.kind === 'shared') return copyFileSync(sharedData(step.file)!, join(dir, basename(step.file)));
  if (step.kind === 'copy') return cpSync(join(ROOT, step.path), join(dir, step.path), { recursive: true });
  const path = join(dir, step.path);
  mkdirSync(dirname(path), { recursive: true });
  if (step.kind === 'write') return writeFileSync(path, step.text);
  const lines = readFileSync(path, 'utf8').split('\n');
  const at = lines.indexOf(step.before);
  if (at < 0 || lines.lastIndexOf(step.before) !== at) throw new Error(`${where}: ${step.path} has the line "${step.before}" ${at < 0 ? 'nowhere' : 'more than once'}`);
  lines.splice(at, 0, ...step.text.replace(/\n$/, '').split('\n'));
  writeFileSync(path, lines.join('\n'));
}

/** The page's line where two outputs first differ. */
function firstDifference(c: Command, doc: readonly string[], got: readonly string[]): number {
  let k = 0;
  while (k < doc.length && k < got.length && doc[k] === got[k]) k++;
  return c.from + Math.min(k, c.to - c.from) + 1;
}

/**
 * Runs a session's commands in `dir`; checks each one's exit code, and its
 * output unless updating. Returns the outputs that differ, as printed.
 */
async function runSession(page: string, lines: readonly string[], commands: readonly Command[], dir: string, out: string): Promise<{ c: Command; lines: string[] }[]> {
  const differ: { c: Command; lines: string[] }[] = [];
  let previous = 0;
  for (const [k, c] of commands.entries()) {
    const { code, lines: got } = await runCommand(c.cmd, dir, previous, out);
    const shown = commands[k + 1]?.cmd.trim() === 'echo $?';
    expect.soft(shown || code === 0, `${page}:${c.line}: \`${c.cmd}\` exited ${code}; show the code with \`$ echo $?\` after it\n${got.join('\n')}`).toBe(true);
    previous = code;
    const want = normalise(lines.slice(c.from, c.to).map((l) => dedent(l, c.indent)), dir);
    const printed = normalise(got, dir);
    if (printed.join('\n') === want.join('\n')) continue;
    differ.push({ c, lines: printed });
    if (!UPDATE) expect.soft(printed.join('\n'), `${page}:${c.line}: \`${c.cmd}\` prints otherwise (first at line ${firstDifference(c, want, printed)}; CTXSIM_UPDATE_DOCS=1 rewrites it)`).toBe(want.join('\n'));
  }
  return differ;
}

/** The newest modification time of the files under a folder. */
function newest(dir: string): number {
  return Math.max(...readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => statSync(join(dir, f)).mtimeMs));
}

/** Fails unless dist/ is built from the current src/: outputs of an older build would be compared, or written into the docs. */
function expectBuilt(): void {
  if (!existsSync(CLI)) throw new Error('dist/cli/main.js is missing: npm run build');
  if (statSync(CLI).mtimeMs < newest(join(ROOT, 'src'))) throw new Error('dist/ is older than src/: npm run build');
}

/** Runs a page's steps in a fresh folder; checks (or, updating, rewrites) every output. */
async function checkPage(page: string): Promise<void> {
  expectBuilt();
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const steps = pageSteps(page, lines);
  expect(steps.some((s) => s.kind === 'session'), `${page} shows no command with its output`).toBe(true);
  const dir = tempDir();
  const out = join(tempDir(), 'output');
  seedCaches(dirname(out));
  const rewrites: { c: Command; lines: string[] }[] = [];
  for (const step of steps) {
    if (step.kind === 'session') rewrites.push(...(await runSession(page, lines, step.commands, dir, out)));
    else applyFile(step, dir, `${page}:${step.line}`);
  }
  seedCaches(dirname(out), true);
  if (!UPDATE || !rewrites.length) return;
  const updated = [...lines];
  for (const { c, lines: printed } of [...rewrites].reverse()) updated.splice(c.from, c.to - c.from, ...printed.map((l) => (l ? c.indent + l : l)));
  writeFileSync(join(ROOT, page), updated.join('\n'));
  console.log(`${page}: rewrote the output of the commands on line ${rewrites.map(({ c }) => c.line).join(', ')}`);
}

describe('the outputs the docs show are what ctxsim prints', () => {
  for (const page of PAGES) {
    const steps = pageSteps(page, readFileSync(join(ROOT, page), 'utf8').split('\n'));
    const commands = steps.flatMap((s) => (s.kind === 'session' ? s.commands : []));
    const missing = steps.flatMap((s) => (s.kind === 'shared' && !sharedData(s.file) ? [s.file] : []))[0];
    const title = `${page}: ${commands.length} command${commands.length === 1 ? '' : 's'}`;
    if (missing) it.skip(`${title} (${skipReason(missing)})`, () => {});
    else it(title, () => checkPage(page), COMMAND_MS * Math.max(1, commands.length));
  }
});
