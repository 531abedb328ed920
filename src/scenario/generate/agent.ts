import { z } from 'zod';
import type { ToolDef } from '../../types.js';
import { formatDuration, type RoundOut, type ToolOut, type TurnOut } from '../docs.js';
import { codeBlock, LANGUAGES, type Language } from './code.js';
import { fullName, userSlug } from './lexicon.js';
import { commonOverrides, rangeField, share, type CommonProfileParams, type Profile } from './profile.js';
import type { Stream } from './stream.js';
import { compose, expand, targetWords, type Slots } from './text.js';

/** Agent profile parameters. */
export interface AgentParams extends CommonProfileParams {
  /** Rounds of tool calls in a session (all its agent loops together), inclusive range. */
  steps: readonly [number, number];
  /** Median tokens (o200k_base) of a tool result. */
  observationTokens: number;
  /** Log-normal sigma of tool-result lengths (p95 ≈ median × e^(1.645·sigma)). */
  observationSpread: number;
  /** No tool result is longer than this many tokens (about). */
  observationCap: number;
  /** Share of rounds that make two calls instead of one. */
  pairShare: number;
  /** Share of rounds with a short assistant text beside the calls. */
  textShare: number;
}

/** The five tools of the coding agent, as offered to the model in every call. */
export const AGENT_TOOL_DEFS: readonly ToolDef[] = [
  {
    name: 'read_file',
    description: 'Read a file of the repository and return its contents with line numbers. Use offset and limit to read part of a long file.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the file, relative to the repository root' },
        offset: { type: 'integer', description: 'First line to read (1-based); default 1' },
        limit: { type: 'integer', description: 'How many lines to read; default the whole file' },
      },
      required: ['path'],
    },
  },
  {
    name: 'search',
    description: 'Search the repository for a regular expression, like grep -rn. Returns matching lines as path:line:text.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Regular expression to look for' },
        path: { type: 'string', description: 'Directory or file to search in; default the repository root' },
        glob: { type: 'string', description: 'Only search files whose name matches this glob, such as *.py' },
      },
      required: ['pattern'],
    },
  },
  {
    name: 'run_tests',
    description: "Run the project's test suite, or part of it, and return the runner's output (failures with their tracebacks, then a summary).",
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Test file or directory to run; default all tests' },
        filter: { type: 'string', description: 'Only run tests whose name contains this text' },
      },
    },
  },
  {
    name: 'edit_file',
    description: 'Replace one exact occurrence of old_str with new_str in a file and return the edited region. Fails if old_str is not found exactly once.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the file to edit' },
        old_str: { type: 'string', description: 'Text to replace, copied exactly from the file' },
        new_str: { type: 'string', description: 'Replacement text' },
      },
      required: ['path', 'old_str', 'new_str'],
    },
  },
  {
    name: 'list_dir',
    description: 'List the files and directories under a path, recursively up to a depth, with their sizes.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory to list; default the repository root' },
        depth: { type: 'integer', description: 'How many levels to descend; default 2' },
      },
    },
  },
];

/** How a language's repository is laid out and tested. */
interface Layout {
  ext: string;
  src: string;
  test: (mod: string) => string;
  runner: string;
  /** A test's name from its words. */
  testName: (words: readonly string[]) => string;
}

const camel = (w: readonly string[]) => w[0] + w.slice(1).map((x) => x[0]!.toUpperCase() + x.slice(1)).join('');
const LAYOUTS: Record<string, Layout> = {
  ts: { ext: '.ts', src: 'src/', test: (m) => `test/${m}.test.ts`, runner: 'npx vitest run', testName: (w) => camel(['test', ...w]) },
  python: { ext: '.py', src: 'app/', test: (m) => `tests/test_${m}.py`, runner: 'pytest -q', testName: (w) => ['test', ...w].join('_') },
  go: { ext: '.go', src: 'internal/', test: (m) => `internal/${m}_test.go`, runner: 'go test ./...', testName: (w) => camel(['Test', ...w]) },
  rust: { ext: '.rs', src: 'src/', test: (m) => `tests/${m}.rs`, runner: 'cargo test', testName: (w) => w.join('_') },
  java: { ext: '.java', src: 'src/main/java/app/', test: (m) => `src/test/java/app/${camel([m])}Test.java`, runner: './gradlew test', testName: (w) => camel(['test', ...w]) },
  ruby: { ext: '.rb', src: 'lib/', test: (m) => `spec/${m}_spec.rb`, runner: 'bundle exec rspec', testName: (w) => ['test', ...w].join('_') },
};

const DIRS = ['api', 'billing', 'core', 'db', 'jobs', 'auth', 'utils', 'models', 'services', 'handlers', 'events', 'storage'];
const MODULES = [
  'invoice', 'ledger', 'cart', 'session', 'webhook', 'scheduler', 'pricing', 'discount', 'refund', 'report', 'export', 'importer',
  'cache', 'retry', 'parser', 'router', 'tokens', 'accounts', 'orders', 'payments', 'inventory', 'notify', 'audit', 'search',
];
/** Words of the failing test's name: never used by other tests, so its name occurs nowhere by chance. */
const FACT_TEST_WORDS = [
  ['rounds', 'half', 'up'], ['keeps', 'currency', 'precision'], ['handles', 'leap', 'day'], ['skips', 'archived', 'rows'],
  ['retries', 'after', 'timeout'], ['merges', 'duplicate', 'lines'], ['applies', 'discount', 'once'], ['orders', 'by', 'due', 'date'],
  ['rejects', 'negative', 'quantity'], ['preserves', 'utc', 'offset'], ['escapes', 'unicode', 'names'], ['expires', 'stale', 'tokens'],
];
const FILLER_TEST_WORDS = [
  ['returns', 'empty', 'list'], ['parses', 'valid', 'input'], ['creates', 'record'], ['updates', 'status'], ['deletes', 'entry'],
  ['lists', 'all'], ['validates', 'email'], ['loads', 'config'], ['sends', 'event'], ['counts', 'items'], ['renders', 'summary'],
  ['paginates', 'results'], ['caches', 'lookup'], ['logs', 'failure'], ['closes', 'connection'], ['sorts', 'names'],
];
const ISSUE_KEYS = ['PAY', 'CORE', 'PLAT', 'BUG', 'OPS', 'DEV'];

/** What a task is about: the bug the user sees, and the fix the agent reports. */
const TASKS = [
  { user: 'The {mod} totals are off by a cent for some orders. Can you find out why and fix it?', fix: 'the rounding now happens after the discount is applied, not before' },
  { user: 'Our {mod} job crashes on records created on February 29. Please fix it.', fix: 'the date arithmetic now goes through the calendar helpers instead of adding days by hand' },
  { user: 'Archived rows still show up in the {mod} export. Track it down and fix it, please.', fix: 'the query now filters on the archived flag before paging' },
  { user: 'Requests to the {mod} endpoint sometimes hang forever. Fix the retry logic.', fix: 'the retry loop now has a deadline and backs off between attempts' },
  { user: 'The {mod} module writes duplicate lines when the same event arrives twice. Make it idempotent.', fix: 'events are now keyed by their id and a second delivery is ignored' },
  { user: 'Add support for partial refunds to {mod}; right now it only refunds whole orders and one test is red.', fix: 'refunds now take an amount and the total is checked against what is left' },
  { user: 'Add a dry-run flag to the {mod} importer; a colleague started it and left a failing test.', fix: 'the importer now takes a dry_run option and skips the writes when it is set' },
];

const USER_FILLERS = [
  'The repository is checked out in the workspace; run whatever you need.',
  'Keep the change small, this goes out with [the next release|tomorrow\'s deploy|the hotfix].',
  'Please do not touch the public API if you can avoid it.',
  'The CI run on main has been red since [yesterday|this morning|the last merge].',
  'I have not looked at this code in [months|a long time|ages].',
  'There is a lot of legacy code around there, so be careful.',
  'Run the tests before you tell me it is done.',
  'If you find something else that looks wrong, tell me but do not fix it yet.',
];
const ASSISTANT_FILLERS = [
  'All tests pass now.',
  'I kept the public interface unchanged.',
  'The change is small and covered by the existing tests.',
  'I did not touch anything outside that module.',
  'Nothing else in the suite changed.',
  'The linter is clean as well.',
  'I left the unrelated warnings alone.',
];

/** Short text an agent writes beside its calls, by tool. */
const ROUND_TEXT: Record<string, readonly string[]> = {
  read_file: ['Let me read that file.', 'Reading the code around it.', 'I need to see how this is used.', 'Checking the implementation.'],
  search: ['Let me search for where this is handled.', 'Searching for the callers.', 'Looking for other uses.', 'Where is this defined?'],
  run_tests: ['Running the tests to see what fails.', 'Let me rerun the tests.', 'Checking the suite again.', 'Running the relevant tests.'],
  edit_file: ['Making the fix.', 'Applying the change.', 'Updating the code.', 'Let me fix that.'],
  list_dir: ['Let me look at the layout of the repository.', 'Listing the directory first.', 'What is in this folder?'],
};

const FOLLOW_UPS: readonly { user: string; probe: readonly Fact[]; reply: string }[] = [
  { user: 'Thanks. Now also add a regression test right next to the test that was failing at first.', probe: ['failing_test'], reply: 'Added the regression test next to {failing_test}; both pass.' },
  { user: 'Good. Could you add a comment in the file you fixed that links the ticket the FIXME mentioned?', probe: ['bug_file', 'issue_id'], reply: 'Added the comment to {bug_file}, linking {issue_id}.' },
  { user: 'Also make the log message include the error code from the first failure, so we can grep for it.', probe: ['error_id'], reply: 'The log line now includes {error_id}.' },
  { user: 'Now run the whole suite and fix any lint warnings in what you touched.', probe: [], reply: 'The whole suite passes and the lint warnings are fixed.' },
  { user: 'Can you also handle the empty case the same way?', probe: [], reply: 'The empty case is handled the same way now, with a test.' },
];

const FINAL_ASKS: Record<Fact, { user: string; reply: string }> = {
  failing_test: { user: 'Which test was failing at first?', reply: 'It was {failing_test}.' },
  error_id: { user: 'What was the error code in that first failure?', reply: 'The error was {error_id}.' },
  bug_file: { user: 'Which file did the bug turn out to be in?', reply: 'The bug was in {bug_file}.' },
  issue_id: { user: 'Which ticket did the FIXME comment point to? I want to close it.', reply: 'The FIXME referenced {issue_id}.' },
};

const FACTS = ['failing_test', 'error_id', 'bug_file', 'issue_id'] as const;
type Fact = (typeof FACTS)[number];
type Tool = 'read_file' | 'search' | 'run_tests' | 'edit_file' | 'list_dir';

/**
 * Characters per o200k_base token of each tool's results (measured on
 * generated text): lengths are drawn in tokens and written in characters,
 * so nothing is tokenized while generating.
 */
const CHARS_PER_TOKEN: Record<Tool, number> = { read_file: 3.5, search: 3.83, run_tests: 3.63, edit_file: 3.5, list_dir: 2.87 };

const LOG_LINES = [
  'INFO  connecting to database at localhost:5432',
  'DEBUG loaded {n} fixtures',
  'WARN  deprecated option "legacy_mode" is ignored',
  'INFO  worker started with {n} threads',
  'DEBUG cache miss for key user:{n}',
  'INFO  migration {n} applied',
  'DEBUG request finished in {n}ms',
  'WARN  slow query took {n}ms',
];

/** Everything one session draws from. */
interface Session {
  rng: Stream;
  lang: Language;
  layout: Layout;
  mod: string;
  mods: string[];
  code: string[];
  /** Lines of passing test runs, and of directory listings. */
  passes: string[];
  entries: string[];
  /** Source files other than the bug's. */
  files: string[];
  tests: string[];
  testFile: string;
  values: Record<Fact, string>;
  params: AgentParams;
}

/**
 * A coding agent's session: the user gives a task, the agent works on it in
 * a loop of tool calls (rounds of read_file, search, run_tests, edit_file,
 * list_dir) whose results have long-tailed lengths; the facts (the failing
 * test, its error code, the file of the bug, the ticket of a FIXME) appear
 * first inside tool results, and follow-ups and a last question need them.
 */
export const agent: Profile<AgentParams> = {
  id: 'agent',
  describe: 'a coding agent’s loop: rounds of tool calls with long-tailed results; facts first seen in tool results, asked for later',
  defaults: {
    turns: [2, 4],
    userWords: 35,
    assistantWords: 35,
    spread: 0.5,
    steps: [20, 200],
    observationTokens: 1500,
    observationSpread: 1.09,
    observationCap: 32000,
    pairShare: 0.15,
    textShare: 0.3,
  },
  overrides: z.strictObject({
    ...commonOverrides,
    steps: rangeField(1).optional(),
    observationTokens: z.number().int().min(10).max(100_000).optional(),
    observationSpread: z.number().min(0).max(2).optional(),
    observationCap: z.number().int().min(10).max(200_000).optional(),
    pairShare: share.optional(),
    textShare: share.optional(),
  }),
  build({ id, rng, turns: T, params }) {
    const person = fullName(rng);
    const lang = rng.pick(LANGUAGES);
    const layout = LAYOUTS[lang.fence]!;
    const mods = rng.sample(MODULES, 14);
    const mod = mods[0]!;
    const dirs = rng.sample(DIRS, 6);
    const path = (d: string, m: string) => `${layout.src}${d}/${m}${layout.ext}`;
    const bugFile = path(dirs[0]!, mod);
    const files = mods.slice(1).map((m, i) => path(dirs[(i % 5) + 1]!, m));
    const testWords = rng.pick(FACT_TEST_WORDS);
    const values: Record<Fact, string> = {
      failing_test: layout.testName([mod, ...testWords]),
      error_id: `E${rng.int(1000, 9999)}`,
      bug_file: bugFile,
      issue_id: `${rng.pick(ISSUE_KEYS)}-${rng.int(1000, 99999)}`,
    };
    const tests = FILLER_TEST_WORDS.map((w) => layout.testName([rng.pick(mods), ...w]));
    const s: Session = { rng, lang, layout, mod, mods, code: codePool(rng, lang), passes: passLines(rng, layout, mods, tests), entries: listEntries(rng, layout, files), files, tests, testFile: layout.test(mod), values, params };
    const task = rng.pick(TASKS);
    const slots: Slots = { mod };

    // Rounds: the task's loop gets most of them, each follow-up (turns 2..T-1) some; the last turn (T ≥ 2) is a question.
    const S = rng.int(params.steps[0], params.steps[1]);
    const loops = T === 1 ? 1 : T - 1;
    const rounds = Array.from({ length: loops }, () => 0);
    if (loops === 1) rounds[0] = S;
    else {
      rounds[0] = Math.max(1, Math.round(S * (0.6 + 0.25 * rng.float())));
      for (let left = S - rounds[0], k = 1; left > 0; left--, k = k === loops - 1 ? 1 : k + 1) rounds[k]!++;
    }

    const out: TurnOut[] = [];
    const stated = new Set<Fact>();
    // Turn 1: the task and its loop.
    const first = taskLoop(s, rounds[0]!);
    for (const f of first.facts) stated.add(f);
    out.push({
      user: compose(rng, [expand(task.user, rng, slots)], USER_FILLERS, slots, targetWords(rng, params.userWords, params.spread), 0.3),
      ...(first.facts.length && { facts: Object.fromEntries(first.facts.map((f) => [f, values[f]])) }),
      tools: first.rounds,
      assistant: compose(rng, [`Done: ${task.fix}.`], ASSISTANT_FILLERS, slots, targetWords(rng, params.assistantWords, params.spread), 0),
    });

    const probed = new Set<Fact>();
    for (let k = 1; k < loops; k++) {
      const options = FOLLOW_UPS.filter((f) => f.probe.every((p) => stated.has(p)) && !f.probe.some((p) => probed.has(p)));
      const ask = rng.pick(options.length ? options : FOLLOW_UPS.filter((f) => !f.probe.length));
      for (const p of ask.probe) probed.add(p);
      const loop = rounds[k] ? followUpLoop(s, rounds[k]!) : undefined;
      out.push({
        user: ask.user,
        gap: formatDuration(60 * rng.int(2, 20)),
        ...(ask.probe.length && { probe: [...ask.probe] }),
        ...(loop && { tools: loop }),
        assistant: fill(ask.reply, values),
      });
    }

    if (T >= 2) {
      // Every fact no follow-up needed is asked for here (in random order); if none is left, one again.
      const left = FACTS.filter((f) => stated.has(f) && !probed.has(f));
      const asks = left.length ? rng.sample(left, left.length) : rng.sample([...stated], 1);
      out.push({
        user: `Before I open the pull request: ${asks.map((f) => FINAL_ASKS[f].user).join(' ')}`,
        gap: formatDuration(60 * rng.int(2, 30)),
        probe: asks,
        assistant: asks.map((f) => fill(FINAL_ASKS[f].reply, values)).join(' '),
      });
    }
    return {
      id,
      title: `Coding agent: ${lang.name} ${mod}`,
      system: `You are a coding agent working in a ${lang.name} repository. Use the tools to read, search, test and edit the code; make the smallest change that fixes the task, and run the tests before you finish.`,
      user: userSlug(person.full),
      tool_defs: AGENT_TOOL_DEFS.map((d) => ({ ...d })),
      turns: out,
    };
  },
};

function fill(template: string, values: Record<Fact, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, k: string) => values[k as Fact]);
}

/**
 * The task's loop of `R` rounds. The failing test and its error code first
 * appear in a run_tests result, the bug's file in a later search result, the
 * ticket in the FIXME of that file when it is read; filler never contains them.
 */
function taskLoop(s: Session, R: number): { rounds: RoundOut[]; facts: Fact[] } {
  const { rng, values } = s;
  const spare = Math.max(0, R - 3);
  const a = rng.int(0, Math.floor(spare * 0.3));
  const b = a + 1 + rng.int(0, Math.floor(spare * 0.2));
  const c = b + 1 + rng.int(0, Math.floor(spare * 0.2));
  const facts: Fact[] = ['failing_test', 'error_id'];
  if (R >= 2) facts.push('bug_file');
  if (R >= 3) facts.push('issue_id');
  const rounds: RoundOut[] = [];
  let edited = false;
  for (let i = 0; i < R; i++) {
    let call: ToolOut;
    let tool: Tool;
    if (i === a) [tool, call] = ['run_tests', { call: 'run_tests', result: testRun(s, size(s, 'run_tests'), true) }];
    else if (i === b) [tool, call] = ['search', { call: 'search', args: { pattern: searchPattern(s) }, result: searchResult(s, size(s, 'search'), values.bug_file) }];
    else if (i === c) [tool, call] = ['read_file', { call: 'read_file', args: { path: values.bug_file }, result: fileText(s, size(s, 'read_file'), `FIXME(${values.issue_id}): ${rng.pick(FIXMES)}`) }];
    else if (i === R - 1 && R >= 4) [tool, call] = ['run_tests', { call: 'run_tests', result: testRun(s, size(s, 'run_tests'), false) }];
    else if (i === c + 1) [tool, call] = ['edit_file', editCall(s, values.bug_file)];
    else {
      // No test run before the first (which fails), no edit before the bug's file is read.
      tool = pickTool(rng, i > c, i > a);
      call = fillerCall(s, tool, i > b, !edited);
    }
    if (tool === 'edit_file' && i > c) edited = true;
    rounds.push(round(s, tool, call, i > b));
  }
  return { rounds, facts };
}

/** A follow-up's loop: reads, edits and test runs that may use the facts (they are stated by now). */
function followUpLoop(s: Session, R: number): RoundOut[] {
  const rounds: RoundOut[] = [];
  for (let i = 0; i < R; i++) {
    const tool: Tool = i === R - 1 ? 'run_tests' : pickTool(s.rng, true);
    const call = i === R - 1 ? { call: 'run_tests', result: testRun(s, size(s, 'run_tests'), false) } : fillerCall(s, tool, true, false);
    rounds.push(round(s, tool, call, true));
  }
  return rounds;
}

/** One round: the call, sometimes a second one (a parallel read or search), sometimes a short text. */
function round(s: Session, tool: Tool, call: ToolOut, known: boolean): RoundOut {
  const calls = [call];
  if (s.rng.chance(s.params.pairShare)) {
    const second: Tool = s.rng.chance(0.6) ? 'read_file' : 'search';
    calls.push(fillerCall(s, second, known, false));
  }
  return { ...(s.rng.chance(s.params.textShare) && { assistant: s.rng.pick(ROUND_TEXT[tool]!) }), calls };
}

const WEIGHTS: readonly [Tool, number][] = [
  ['read_file', 0.36],
  ['search', 0.26],
  ['run_tests', 0.14],
  ['edit_file', 0.12],
  ['list_dir', 0.12],
];

function pickTool(rng: Stream, editing: boolean, testing = true): Tool {
  const allowed = WEIGHTS.filter(([t]) => (editing || t !== 'edit_file') && (testing || t !== 'run_tests'));
  let r = rng.float() * allowed.reduce((n, [, w]) => n + w, 0);
  for (const [t, w] of allowed) if ((r -= w) < 0) return t;
  return 'read_file';
}

/** A tool result's target length in characters: log-normal tokens, capped. */
function size(s: Session, tool: Tool): number {
  const p = s.params;
  const tokens = Math.max(8, Math.min(p.observationCap, s.rng.logNormal(p.observationTokens, p.observationSpread)));
  return Math.round(tokens * CHARS_PER_TOKEN[tool]);
}

/**
 * A call that plants no fact. `known`: the bug's file may be named (its
 * fact is stated); `failing`: test runs still fail (with the planted test
 * and error, which are stated by then).
 */
function fillerCall(s: Session, tool: Tool, known: boolean, failing: boolean): ToolOut {
  const { rng } = s;
  const file = known && rng.chance(0.4) ? s.values.bug_file : rng.pick(s.files);
  switch (tool) {
    case 'read_file':
      return { call: 'read_file', args: { path: rng.chance(0.15) ? s.testFile : file }, result: fileText(s, size(s, tool)) };
    case 'search':
      return { call: 'search', args: { pattern: searchPattern(s), ...(rng.chance(0.3) && { path: s.layout.src }) }, result: searchResult(s, size(s, tool), known ? s.values.bug_file : undefined) };
    case 'run_tests':
      return { call: 'run_tests', args: rng.chance(0.5) ? { path: s.testFile } : {}, result: testRun(s, size(s, tool), failing) };
    case 'edit_file':
      return editCall(s, file);
    case 'list_dir':
      return { call: 'list_dir', args: { path: rng.chance(0.5) ? '.' : s.layout.src }, result: listing(s, size(s, tool), known) };
  }
}

const FIXMES = ['rounding happens before the discount', 'this breaks on leap years', 'archived rows are not filtered here', 'no deadline on the retry', 'not idempotent when events repeat', 'assumes a full refund'];
const EDITS: readonly [string, string][] = [
  ['total = round(subtotal) - discount', 'total = round(subtotal - discount)'],
  ['for attempt in range(retries):', 'for attempt in range(retries):\n    if deadline_passed(): break'],
  ['rows = query.all()', 'rows = query.filter(archived=False).all()'],
  ['if event.id in seen: pass', 'if event.id in seen: return'],
  ['amount = order.total', 'amount = min(requested, order.total - refunded)'],
];
const SEARCH_WORDS = ['total', 'retry', 'archived', 'discount', 'refund', 'parse', 'deadline', 'event_id', 'round', 'export', 'session', 'cache'];

function editCall(s: Session, file: string): ToolOut {
  const [before, after] = s.rng.pick(EDITS);
  return { call: 'edit_file', args: { path: file, old_str: before, new_str: after }, result: `The file ${file} has been edited. Here is the edited region:\n${fileText(s, size(s, 'edit_file'))}` };
}

function searchPattern(s: Session): string {
  return s.rng.chance(0.5) ? s.rng.pick(SEARCH_WORDS) : `${s.rng.pick(SEARCH_WORDS)}|${s.rng.pick(SEARCH_WORDS)}`;
}

/** Lines of the session's code: functions from the code generator, read in slices (generating each observation anew is too slow). */
function codePool(rng: Stream, lang: Language): string[] {
  const lines: string[] = [];
  while (lines.length < POOL_LINES) {
    const block = codeBlock(rng, lang, rng.int(6, 22)).split('\n');
    for (let i = 1; i < block.length - 1; i++) lines.push(block[i]!);
    lines.push('');
  }
  return lines;
}

const POOL_LINES = 2400;

/** Consecutive lines of the session's code for about `chars` characters (plus `perLine` each), from a random place. */
function codeLines(s: Session, chars: number, perLine = 8): string[] {
  const lines: string[] = [];
  let at = s.rng.int(0, s.code.length - 1);
  for (let n = 0; n < chars; at = (at + 1) % s.code.length) {
    const l = s.code[at]!;
    lines.push(l);
    n += l.length + perLine;
  }
  return lines;
}

/** A file as read_file shows it (`cat -n`), with `marker` as a comment somewhere inside. */
function fileText(s: Session, chars: number, marker?: string): string {
  const lines = codeLines(s, chars);
  if (marker) lines.splice(s.rng.int(0, lines.length - 1), 0, `${s.lang.comment} ${marker}`);
  const start = s.rng.chance(0.7) ? 1 : s.rng.int(20, 400);
  let out = '';
  for (let i = 0; i < lines.length; i++) out += `${String(start + i).padStart(6)}\t${lines[i]}\n`;
  return out;
}

/** grep -rn output; `planted` (when given) is the path of some of the hits. Few draws per result: files and line numbers cycle. */
function searchResult(s: Session, chars: number, planted?: string): string {
  const { rng, files } = s;
  let out = '';
  let at = rng.int(0, s.code.length - 1);
  const step = rng.int(1, files.length - 1);
  // The planted path's first hit comes within the first lines, so a short result has it too; then every seventh.
  const hit = planted ? rng.int(0, 3) : -1;
  for (let i = 0; out.length < chars || i <= hit; at = (at + 1) % s.code.length) {
    const l = s.code[at]!.trim();
    if (!l) continue;
    const file = planted && (i === hit || i % 7 === 6) ? planted : files[(at + i * step) % files.length]!;
    out += `${file}:${((at * 31 + i * 17) % 478) + 3}:${l}\n`;
    i++;
  }
  return out;
}

/** Lines of a test run that passed, for one session: walked from a random place like the code. */
function passLines(rng: Stream, layout: Layout, mods: readonly string[], tests: readonly string[]): string[] {
  return Array.from({ length: 160 }, (_, i) =>
    rng.chance(0.2) ? rng.pick(LOG_LINES).replace('{n}', String(rng.int(2, 9000))) : `${layout.test(rng.pick(mods))}::${rng.pick(tests)} PASSED [${String((i % 99) + 1).padStart(3)}%]`,
  );
}

/** A test run's output: results per test, captured logs, failures with tracebacks, a summary. */
function testRun(s: Session, chars: number, failing: boolean): string {
  const { rng, values, layout, passes } = s;
  let out = `$ ${layout.runner}\n`;
  let passed = 0;
  const failure = (): string => {
    const trace = codeLines(s, Math.min(1200, chars * 0.3)).slice(0, 12).map((l) => `    ${l}`).join('\n');
    return `\nFAILED ${s.testFile}::${values.failing_test}\n${trace}\nAssertionError [${values.error_id}]: expected value to match the stored total\n\n`;
  };
  const failAt = failing ? rng.int(0, Math.max(0, Math.floor(chars * 0.6))) : -1;
  let failed = false;
  for (let at = rng.int(0, passes.length - 1); out.length < chars; at = (at + 1) % passes.length) {
    if (failing && !failed && out.length >= failAt) {
      out += failure();
      failed = true;
    }
    out += `${passes[at]}\n`;
    passed++;
  }
  if (failing && !failed) out += failure();
  return `${out}=== ${failing ? '1 failed, ' : ''}${passed} passed in ${(rng.int(80, 4000) / 100).toFixed(2)}s ===\n`;
}

/** Entries of a recursive directory listing, with sizes (without the bug's file). */
function listEntries(rng: Stream, layout: Layout, files: readonly string[]): string[] {
  return Array.from({ length: 200 }, () => {
    const r = rng.float();
    const entry = r < 0.5 ? rng.pick(files) : r < 0.7 ? layout.test(rng.pick(MODULES)) : `${rng.pick(['vendor', 'node_modules', 'build', 'docs', 'scripts', 'fixtures'])}/${rng.pick(MODULES)}/${rng.pick(SEARCH_WORDS)}${rng.pick(['.json', '.md', '.txt', '.lock', layout.ext])}`;
    return `${entry}  ${(rng.int(2, 4000) / 10).toFixed(1)} KB`;
  });
}

/** A recursive directory listing; the bug's file is among the entries once it is `known`. */
function listing(s: Session, chars: number, known: boolean): string {
  const { rng, entries } = s;
  let out = '';
  const bug = known ? rng.int(0, 20) : -1;
  for (let at = rng.int(0, entries.length - 1), i = 0; out.length < chars; at = (at + 1) % entries.length, i++) {
    out += i === bug ? `${s.values.bug_file}  ${(rng.int(2, 400) / 10).toFixed(1)} KB\n` : `${entries[at]}\n`;
  }
  return out;
}
