import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CtxsimError } from '../src/errors.js';
import { readBaseline } from '../src/gate/baseline.js';
import { loadPolicyModule } from '../src/policies/module.js';
import { loadPrices } from '../src/pricing/load.js';
import { InputFileError, MAX_JSON_MARKS, NOT_FOLLOWED, readInputFile, readInputText } from '../src/process.js';
import { importDataset } from '../src/scenario/import/index.js';
import { scenarioFromFile } from '../src/scenario/load.js';
import { mergeShardFiles } from '../src/study/merge.js';
import { memorySink } from '../src/output/sinks.js';
import { displayPath } from '../src/output/display.js';
import { loadScenarios, loadStudy } from '../src/study/study.js';
import { DocTooLarge, SourceDoc } from '../src/text/document.js';
import { Cassette } from '../src/upkeep/cassette.js';
import { Journal } from '../src/upkeep/journal.js';
import { defaultUpkeep, studyUpkeep } from '../src/recording/upkeep.js';
import { recordCli } from './_io.js';
import { FakeOpenAI } from './_openai-server.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

/**
 * Every file ctxsim reads is a regular file, symbolic links followed: a
 * FIFO, a device, a folder — or a link to one — named as any input is one
 * line and exit 2, before anything is read, never a wait (a FIFO with no
 * writer) or an abort (`/dev/zero` read whole). Each kind of input through
 * its library reader; a few through the built CLI, which must end within
 * a generous bound.
 *
 * A FIFO is given a writer that opens it and closes it at once (a child
 * process, killed after the test): a reader that opened it to read, as
 * before, would see it empty and fail the test rather than hang it.
 */

const UNIX = process.platform !== 'win32';
const ZERO = existsSync('/dev/zero') ? '/dev/zero' : undefined;
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const SCENARIO = join(ROOT, 'scenarios', 'noah-amnesia.yaml');

/** A FIFO at `path`, with a writer that lets a blocked reader go. */
function fifo(path: string): string {
  execFileSync('mkfifo', [path]);
  const writer = spawn('sh', ['-c', ': > "$1"', 'sh', path], { stdio: 'ignore' });
  onTestFinished(() => void writer.kill());
  return path;
}

interface Special {
  name: string;
  /** Puts the special file at `path` (or gives one of the system's): the path a reader is given. */
  make: (path: string) => string;
  /** How the refusal says what it is. */
  is: string;
}

const aFolder = (path: string) => {
  mkdirSync(path);
  return path;
};
/** A symbolic link at `path` to what `to` puts beside it. */
const link = (to: (path: string) => string) => (path: string) => {
  symlinkSync(to(`${path}.target`), path);
  return path;
};
const zero = () => ZERO!;

const SPECIALS: Special[] = [
  ...(UNIX ? [{ name: 'a FIFO', make: fifo, is: 'is a FIFO, not a regular file' }] : []),
  ...(ZERO ? [{ name: '/dev/zero', make: zero, is: 'is a device, not a regular file' }] : []),
  { name: 'a folder', make: aFolder, is: 'is a folder, not a regular file' },
  ...(UNIX ? [{ name: 'a link to a FIFO', make: link(fifo), is: 'is a FIFO, not a regular file' }] : []),
  ...(UNIX && ZERO ? [{ name: 'a link to /dev/zero', make: link(zero), is: 'is a device, not a regular file' }] : []),
  ...(UNIX ? [{ name: 'a link to a folder', make: link(aFolder), is: 'is a folder, not a regular file' }] : []),
];

/** The error `fn` throws (or rejects with), and how long it took. */
async function refusal(fn: () => unknown): Promise<{ error: unknown; ms: number }> {
  const start = performance.now();
  try {
    await fn();
  } catch (error) {
    return { error, ms: performance.now() - start };
  }
  throw new Error('expected a refusal, got none');
}

/** The readers of every kind of input: the file name it is given, and the one line it refuses `path` with. */
const READERS: { kind: string; name: string; read: (path: string) => unknown; line: (path: string, is: string) => string }[] = [
  { kind: 'scenario file', name: 's.yaml', read: (p) => scenarioFromFile(p, 'shown'), line: (_p, is) => `shown: ${is}` },
  { kind: 'study file', name: 'study.yaml', read: (p) => loadStudy(p), line: (p, is) => `${displayPath(p)}: ${is}` },
  { kind: 'price table', name: 'prices.json', read: (p) => loadPrices(p), line: (p, is) => `${displayPath(p)}: ${is}` },
  { kind: 'dataset (import)', name: 'locomo.json', read: (p) => importDataset('locomo', { path: p, file: 'shown', base: ROOT }, {}), line: (_p, is) => `shown: ${is}` },
  { kind: 'baseline', name: 'baseline.json', read: (p) => readBaseline(p, 'shown'), line: (_p, is) => `shown: ${is}` },
  // A folder given to merge is a folder of shards: the special file is found in its folder.
  { kind: 'shard', name: 'shard-1-of-2.json', read: (p) => mergeShardFiles([p === ZERO ? p : dirname(p)], memorySink()), line: (p, is) => `${displayPath(p)}: ${is}` },
  { kind: 'policy module', name: 'policy.mjs', read: (p) => loadPolicyModule(p, 'shown'), line: (_p, is) => `policy module shown: ${is}` },
  {
    kind: 'upkeep cassette (replay)',
    name: 'upkeep.cassette.jsonl',
    read: (p) => studyUpkeep({ upkeepSource: { ...defaultUpkeep(ROOT), mode: 'replay', cassette: p }, policies: [], seed: 1, models: ['gpt-4o-mini'], tokenizer: 'auto', prices: 'builtin' }, [], () => 'shown'),
    line: (_p, is) => `upkeep cassette shown: ${is}`,
  },
  {
    kind: 'recording journal',
    name: 'upkeep.cassette.jsonl.journal',
    read: (p) => Journal.read(p.replace(/\.journal$/, ''), new Cassette(), () => 'shown'),
    line: (_p, is) => `the recording journal shown ${is}; remove it, and record again`,
  },
];

describe('an input that is not a regular file is one line and exit 2, read by nothing', () => {
  for (const r of READERS) {
    for (const s of SPECIALS) {
      const journal = r.kind === 'recording journal';
      // A journal is `<cassette>.journal`: /dev/zero is one only through a link, below.
      if (journal && s.name === '/dev/zero') continue;
      // A journal is never followed through a link, whatever it leads to.
      const is = journal && s.name.startsWith('a link') ? NOT_FOLLOWED : s.is;
      it(`${r.kind}: ${s.name}`, async () => {
        const path = s.make(join(tempDir(), r.name));
        const { error, ms } = await refusal(() => r.read(path));
        expect(error).toBeInstanceOf(CtxsimError);
        expect((error as CtxsimError).message).toBe(r.line(path, is));
        expect((error as CtxsimError).exitCode).toBe(2);
        expect(ms).toBeLessThan(30_000);
      });
    }
  }

  it.skipIf(!UNIX)('a scenario glob lists regular files only: a FIFO it would match is no match, a FIFO named whole is refused', async () => {
    const dir = tempDir();
    const path = fifo(join(dir, 'waiting.yaml'));
    const glob = await refusal(() => loadScenarios([{ kind: 'glob', pattern: '*.yaml', base: dir }]));
    expect((glob.error as Error).message).toBe('--scenario *.yaml: no scenario file matches');
    const named = await refusal(() => loadScenarios([{ kind: 'glob', pattern: 'waiting.yaml', base: dir }]));
    expect((named.error as Error).message).toBe(`${displayPath(path)}: is a FIFO, not a regular file`);
    // A link the glob matches is followed, and what it leads to refused.
    symlinkSync(path, join(dir, 'link.yaml'));
    const linked = await refusal(() => loadScenarios([{ kind: 'glob', pattern: '*.yaml', base: dir }]));
    expect((linked.error as Error).message).toBe(`${displayPath(join(dir, 'link.yaml'))}: is a FIFO, not a regular file`);
  });
});

describe('the recording journal is never followed through a symbolic link', () => {
  const entry = { key: 'a'.repeat(32), kind: 'summary' as const, model: 'gpt-4o-mini', text: 'a summary', usage: { input: 1, output: 1 } };

  it.skipIf(!UNIX)('a link that points nowhere beside the cassette: appending is refused, and nothing is made where it leads', () => {
    const dir = tempDir();
    const outside = join(tempDir(), 'stolen');
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    // Put there after the journal was read (none was there): the open itself refuses it.
    const journal = Journal.read(cassette, new Cassette(), (p) => p);
    symlinkSync(outside, Journal.pathOf(cassette));
    expect(() => journal.append(entry)).toThrow(new CtxsimError(`the recording journal ${Journal.pathOf(cassette)} is a symbolic link, which is not followed here; remove it, and record again`, 'upkeep-journal'));
    journal.close();
    expect(existsSync(outside)).toBe(false);
  });

  it.skipIf(!UNIX)('a FIFO put in its place: appending is refused without waiting for a reader', () => {
    const dir = tempDir();
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const journal = Journal.read(cassette, new Cassette(), (p) => p);
    execFileSync('mkfifo', [Journal.pathOf(cassette)]);
    expect(() => journal.append(entry)).toThrow(/ is a FIFO, not a regular file; remove it, and record again$/);
  });

  it.skipIf(!UNIX)('ctxsim run --upkeep record: a dangling link in the journal’s place is refused before any request, and nothing is made where it leads', async () => {
    const server = new FakeOpenAI();
    const url = await server.start();
    onTestFinished(() => server.stop());
    const dir = tempDir();
    const outside = join(tempDir(), 'outside', 'stolen');
    copyFileSync(join(ROOT, 'test', 'fixtures', 'upkeep', 'scenario.yaml'), join(dir, 'scenario.yaml'));
    writeFileSync(join(dir, 'study.yaml'), `scenarios: [scenario.yaml]\npolicies: [summary]\nupkeep: {mode: record, baseURL: '${url}', retries: 0}\n`);
    const journal = join(dir, 'upkeep.cassette.jsonl.journal');
    symlinkSync(outside, journal);
    const study = join(dir, 'study.yaml');
    // Named by the study: confined as its cassette is, a problem at the study's key.
    const confined = await recordCli(['run', study, '--upkeep', 'record', '--out', join(dir, 'out'), '--no-token-cache']);
    expect(confined.stderr).toBe(
      `ctxsim: ${displayPath(study)}:3:9 upkeep.cassette: ${journal} (it leads to ${outside}) is outside the study's folder and the working folder: a study file reads and writes its cassette’s journal only below them; --cassette on the command line reaches anywhere\n`,
    );
    expect(confined.code).toBe(2);
    // Named on the command line, which reaches anywhere: the journal is still never followed.
    const flagged = await recordCli(['run', study, '--upkeep', 'record', '--cassette', join(dir, 'upkeep.cassette.jsonl'), '--out', join(dir, 'out'), '--no-token-cache']);
    expect(flagged.stderr).toBe(`ctxsim: the recording journal ${displayPath(journal)} is a symbolic link, which is not followed here; remove it, and record again\n`);
    expect(flagged.code).toBe(2);
    expect(existsSync(outside)).toBe(false);
    expect(server.connections).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['scenario.yaml', 'study.yaml', 'upkeep.cassette.jsonl.journal']);
  });

  it.skipIf(!UNIX)('a hard link in its place (another name of a file that may lie anywhere): neither read nor cut nor appended to', () => {
    const dir = tempDir();
    const victim = join(tempDir(), 'token');
    // One line without its newline: read as a line a kill cut short, which the first append would cut off.
    writeFileSync(victim, 'sk-secret');
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    linkSync(victim, Journal.pathOf(cassette));
    const refusal = new CtxsimError(`the recording journal ${Journal.pathOf(cassette)} has other hard links (2 names of one file), which are not written through here; remove it, and record again`, 'upkeep-journal');
    expect(() => Journal.read(cassette, new Cassette(), (p) => p)).toThrow(refusal);
    // Put there after the journal was read (none was there): the open itself refuses it.
    const other = join(tempDir(), 'upkeep.cassette.jsonl');
    const journal = Journal.read(other, new Cassette(), (p) => p);
    linkSync(victim, Journal.pathOf(other));
    expect(() => journal.append(entry)).toThrow(new CtxsimError(refusal.message.replace(Journal.pathOf(cassette), Journal.pathOf(other)).replace('2 names', '3 names'), 'upkeep-journal'));
    journal.close();
    expect(readFileSync(victim, 'utf8')).toBe('sk-secret');
  });

  it('a journal of its own is appended to as before', () => {
    const dir = tempDir();
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const journal = Journal.read(cassette, new Cassette(), (p) => p);
    journal.append(entry);
    journal.close();
    const again = new Cassette();
    expect(Journal.read(cassette, again, (p) => p).size).toBe(1);
    expect(again.size).toBe(1);
  });
});

describe('sizes', () => {
  it('a file larger than a reader takes is refused before it is read', () => {
    const file = join(tempDir(), 'big.json');
    writeFileSync(file, 'x'.repeat(1001));
    expect(() => readInputFile(file, { shown: 'big.json', maxBytes: 1000 })).toThrow(new InputFileError('big.json', 'is too large to read whole (0.0 MB; at most 0.0 MB)'));
    expect(readInputFile(file, { maxBytes: 1001 }).length).toBe(1001);
  });

  it(`a file for JSON.parse with more than ${MAX_JSON_MARKS.toLocaleString('en-US')} of { [ , is refused before it is parsed`, () => {
    const file = join(tempDir(), 'brackets.json');
    writeFileSync(file, '['.repeat(MAX_JSON_MARKS + 1));
    expect(() => readInputText(file, { shown: 'brackets.json', json: true })).toThrow(
      new InputFileError('brackets.json', 'holds too many JSON values to parse (over 40,000,000 of `{`, `[` and `,`)'),
    );
    // Read as text, not for JSON.parse, it is only a long line.
    expect(readInputText(file).length).toBe(MAX_JSON_MARKS + 1);
  });

  it('a YAML document over its bounds is one located problem, refused as it is parsed', () => {
    expect(() => SourceDoc.parse('many.yaml', `[${'0,'.repeat(100)}0]`, 100)).toThrow(DocTooLarge);
    expect(() => SourceDoc.parse('many.yaml', `id: x\nturns: [${'0,'.repeat(100)}0]`, 100)).toThrow('many.yaml:2:103: too many values to parse (over 100 values and indicators by here)');
    expect(SourceDoc.parse('few.yaml', `[${'0,'.repeat(49)}0]`, 100).value).toHaveLength(50);
    expect(() => SourceDoc.parse('long.yaml', `"${'a'.repeat(32_000_000)}"`)).toThrow('long.yaml: is too large to parse (32.0 MB of text; at most 32 MB)');
  });
});

describe('through the built CLI: one line, exit 2, within a generous bound, nothing written', () => {
  const built = existsSync(MAIN);
  /** Runs the built CLI in `dir`, killed past two minutes. */
  const run = (dir: string, ...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, encoding: 'utf8', timeout: 120_000, env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' } });
  const cases: { name: string; args: (dir: string, special: string) => string[]; special: (dir: string) => string; line: (special: string) => string }[] = [
    ...(ZERO ? [{ name: 'import --format locomo /dev/zero (aborted the process before)', args: (_d: string, s: string) => ['import', '--format', 'locomo', s, '--out', 'out'], special: () => ZERO, line: (s: string) => `ctxsim: ${s}: is a device, not a regular file` }] : []),
    ...(UNIX
      ? [
          { name: 'run --scenario FIFO', args: (_d: string, s: string) => ['run', '--scenario', s, '--out', 'out'], special: (d: string) => fifo(join(d, 'fifo.yaml')), line: (s: string) => `ctxsim: ${s}: is a FIFO, not a regular file` },
          { name: 'run --upkeep replay --cassette FIFO', args: (_d: string, s: string) => ['run', '--scenario', SCENARIO, '--policy', 'summary', '--upkeep', 'replay', '--cassette', s, '--out', 'out'], special: (d: string) => fifo(join(d, 'fifo.jsonl')), line: (s: string) => `ctxsim: upkeep cassette ${s}: is a FIFO, not a regular file` },
          { name: 'check --baseline FIFO', args: (_d: string, s: string) => ['check', '--scenario', SCENARIO, '--baseline', s, '--out', 'out'], special: (d: string) => fifo(join(d, 'fifo.json')), line: (s: string) => `ctxsim: ${s}: is a FIFO, not a regular file` },
          { name: 'merge FIFO', args: (_d: string, s: string) => ['merge', s, '--out', 'out'], special: (d: string) => fifo(join(d, 'shard-1-of-2.json')), line: (s: string) => `ctxsim: ${s}: is a FIFO, not a regular file` },
        ]
      : []),
    { name: 'run STUDY that is a folder', args: (_d, s) => ['run', s, '--out', 'out'], special: (d) => aFolder(join(d, 'study.yaml')), line: (s) => `ctxsim: ${s}: is a folder, not a regular file` },
  ];
  for (const c of cases) {
    it.skipIf(!built)(`${c.name}${built ? '' : ' (skipped: dist/ is missing; npm test builds it)'}`, () => {
      const dir = tempDir();
      const special = c.special(dir);
      const shown = special.startsWith(dir) ? special.slice(dir.length + 1) : special;
      const before = readdirSync(dir).sort();
      const r = run(dir, ...c.args(dir, shown));
      expect(r.error).toBeUndefined();
      expect(r.stderr).toBe(`${c.line(shown)}\n`);
      expect(r.status).toBe(2);
      expect(readdirSync(dir).sort()).toEqual(before);
    });
  }
});

describe('encoding', () => {
  /** What reading `bytes` as an input's text gives: the text, or the reason it is refused. */
  function read(bytes: number[] | Buffer): string {
    const file = join(tempDir(), 'f.txt');
    writeFileSync(file, Buffer.from(bytes));
    try {
      return readInputText(file, { shown: 'f.txt' });
    } catch (e) {
      return (e as InputFileError).message;
    }
  }
  const at = (line: number, column: number, byte: string) => `f.txt: is not UTF-8 text: at line ${line}, column ${column}, byte ${byte} starts no UTF-8 character; save it as UTF-8`;

  it('a file that is not UTF-8 is refused at its first byte that is not, never read with U+FFFD in its place', () => {
    expect(read(Buffer.from('id: a\nname: caf\u00e9 \u{1f600} \ufffd\n'))).toBe('id: a\nname: caf\u00e9 \u{1f600} \ufffd\n');
    // Latin-1: the column counts characters, an emoji (two UTF-16 units) as two, as the other columns do.
    expect(read([...Buffer.from('id: a\n\u{1f600} caf'), 0xe9, 0x0a])).toBe(at(2, 7, '0xE9'));
    expect(read([0xff, 0x41])).toBe(at(1, 1, '0xFF'));
    expect(read([0x41, 0xc0, 0x80])).toBe(at(1, 2, '0xC0')); // an overlong NUL
    expect(read([0x41, 0xed, 0xa0, 0x80])).toBe(at(1, 2, '0xED')); // a surrogate
    expect(read([0x41, 0xf4, 0x90, 0x80, 0x80])).toBe(at(1, 2, '0xF4')); // past U+10FFFF
    expect(read([0x41, 0x0a, 0xe2, 0x82])).toBe(at(2, 1, '0xE2')); // cut short
    expect(read(Buffer.from('\ufeffid: a\n', 'utf16le'))).toBe('f.txt: is UTF-16 text (it starts with a UTF-16 byte order mark); save it as UTF-8');
  });

  it('through the readers: a dataset, a scenario, a price table, a study', async () => {
    const dir = tempDir();
    const latin1 = (name: string, text: string) => {
      writeFileSync(join(dir, name), Buffer.from(text, 'latin1'));
      return join(dir, name);
    };
    const reason = 'is not UTF-8 text: at line 1, column 4, byte 0xE9 starts no UTF-8 character; save it as UTF-8';
    expect(() => importDataset('openai', { path: latin1('c.jsonl', '{"m\u00e9ssages": []}\n'), file: 'c.jsonl', base: dir })).toThrow(`c.jsonl: ${reason}`);
    expect(() => scenarioFromFile(latin1('s.yaml', 'id:\u00e9 a\n'), 's.yaml')).toThrow(`s.yaml: ${reason}`);
    expect(() => loadPrices(latin1('p.json', '{"g\u00e9": {}}'))).toThrow(reason);
    await expect(loadStudy(latin1('study.yaml', 'see\u00e9d: 1\n'))).rejects.toThrow(reason);
  });

  it('through the readers of JSON Lines: an upkeep cassette and a recording journal, at the line', async () => {
    const [dir, other] = [tempDir(), tempDir()];
    const line = '{"key":"k","kind":"summary","response":"caf\u00e9"}\n';
    writeFileSync(join(dir, 'c.jsonl'), Buffer.from(`\n${line}`, 'latin1'));
    writeFileSync(join(other, 'c.jsonl.journal'), Buffer.from(line, 'latin1'));
    const reason = 'is not UTF-8 text: at line 2, column 44, byte 0xE9 starts no UTF-8 character; save it as UTF-8';
    const [cassette, journal] = ['upkeep cassette (replay)', 'recording journal'].map((k) => READERS.find((r) => r.kind === k)!);
    await expect(async () => cassette!.read(join(dir, 'c.jsonl'))).rejects.toThrow(cassette!.line('', reason));
    await expect(async () => journal!.read(join(other, 'c.jsonl.journal'))).rejects.toThrow(journal!.line('', reason.replace('line 2, column 44', 'line 1, column 44')));
  });
});
