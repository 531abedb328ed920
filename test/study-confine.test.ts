import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { asyncProblems, recordCli } from './_io.js';
import { serverForFile } from './_openai-server.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';
import { loadStudy } from '../src/study/study.js';
import { realPath } from '../src/output/real-path.js';

/**
 * A study file reaches no further than the command line lets it: it opens
 * no network (`upkeep.mode: record` or `live` needs `--upkeep` too), and what
 * it names to write or run — `out`, the cassette, policy modules — lies in
 * its folder or below the working folder, whether it tries an absolute path,
 * `..` or a symbolic link. Each refusal is exit 2 naming the study file, the
 * key, the path and the flag that reaches there; the same run with that flag
 * works.
 */

const KEY = 'sk-test-confine-secret-0123456789';
const SCENARIO = join(ROOT, 'test', 'fixtures', 'upkeep', 'scenario.yaml');
const MODULE = join(ROOT, 'test', 'fixtures', 'policies', 'keep-edges.mjs');

const { server, url } = serverForFile();
afterEach(() => vi.unstubAllEnvs());

// A run that need only succeed writes one file (`--out out.json`): a report folder's charts would add nothing here.
const ctxsim = (args: string[]) => recordCli([...args, '--no-token-cache', '--quiet'], { CTXSIM_TEST_CONFINE_KEY: KEY });

/** A temp folder with `project/` holding the scenario and a study of these lines (after its scenarios and policies), and `outside/` beside it. */
function project(lines: string[], policies = ['full']): { root: string; dir: string; study: string; outside: string } {
  const root = tempDir();
  const dir = join(root, 'project');
  const outside = join(root, 'outside');
  mkdirSync(dir);
  mkdirSync(outside);
  copyFileSync(SCENARIO, join(dir, 'scenario.yaml'));
  const study = join(dir, 'study.yaml');
  writeFileSync(study, ['scenarios: [scenario.yaml]', `policies: [${policies.join(', ')}]`, ...lines, ''].join('\n'));
  return { root, dir, study, outside };
}

/** Expects exit 2 with exactly one line on stderr, matching `line`. */
function refused(r: { code: number; stdout: string; stderr: string }, line: RegExp): void {
  expect(r.stderr).toMatch(line);
  expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
  expect(r.stderr).not.toContain('    at ');
  expect(r.code).toBe(2);
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a study file opens no network by itself', () => {
  for (const mode of ['record', 'live'] as const) {
    it(`upkeep.mode: ${mode} from the file alone is exit 2 naming the host, and no connection is made; with --upkeep ${mode} it runs`, async () => {
      const { dir, study } = project([`upkeep: {mode: ${mode}, baseURL: '${url()}', apiKeyEnv: CTXSIM_TEST_CONFINE_KEY}`], ['facts']);
      const host = new URL(url()).host;
      const before = server.connections;
      const asked = server.seen.length;
      const r = await ctxsim(['run', study, '--out', join(dir, 'out')]);
      refused(r, new RegExp(`^ctxsim: \\S*study\\.yaml:3:\\d+ upkeep\\.mode: ${mode} sends requests to ${esc(host)} \\(the API key from \\$CTXSIM_TEST_CONFINE_KEY\\); a study file cannot open the network by itself: add --upkeep ${mode} to the command line\\n$`));
      expect(server.connections).toBe(before);
      expect(existsSync(join(dir, 'out'))).toBe(false);
      // `check` and `table` load the study the same way.
      refused(await ctxsim(['table', study]), /upkeep\.mode: .* add --upkeep/);
      refused(await ctxsim(['check', study, '--baseline', join(dir, 'none.json')]), /upkeep\.mode: .* add --upkeep/);
      expect(server.connections).toBe(before);

      // The command line opens it, and says where requests go and which variable holds the key (never the key).
      const io = await recordCli(['run', study, '--upkeep', mode, '--out', join(dir, 'out.json'), '--no-token-cache'], { CTXSIM_TEST_CONFINE_KEY: KEY });
      expect(io.code).toBe(0);
      // Requests, not connections: this process's client may reuse a connection an earlier test opened.
      expect(server.seen.length).toBeGreaterThan(asked);
      expect(io.stderr).toContain(`from ${url()} with the API key in $CTXSIM_TEST_CONFINE_KEY\n`);
      expect(io.stdout + io.stderr).not.toContain(KEY);
    });
  }

  it('a study may pin replay or simulate: they never connect', async () => {
    const { dir, study } = project(['upkeep: {mode: simulate}']);
    const before = server.connections;
    expect((await ctxsim(['run', study, '--out', join(dir, 'out.json')])).code).toBe(0);
    writeFileSync(join(dir, 'upkeep.cassette.jsonl'), '');
    writeFileSync(study, `scenarios: [scenario.yaml]\npolicies: [full]\nupkeep: {mode: replay, baseURL: '${url()}'}\n`);
    expect((await ctxsim(['run', study, '--out', join(dir, 'replayed.json')])).code).toBe(0);
    expect(server.connections).toBe(before);
  });

  it('--base-url and --api-key-env choose the endpoint and key over the study, and only with record or live', async () => {
    const { dir, study } = project(['upkeep: {baseURL: "https://api.invalid/v1", apiKeyEnv: OTHER_VARIABLE}'], ['facts']);
    const r = await ctxsim(['run', study, '--upkeep', 'record', '--base-url', url(), '--api-key-env', 'CTXSIM_TEST_CONFINE_KEY', '--out', join(dir, 'out.json')]);
    expect(r.code).toBe(0);
    expect(server.seen.at(-1)!.authorization).toBe(`Bearer ${KEY}`);
    refused(await ctxsim(['run', study, '--base-url', url()]), /^ctxsim: --base-url: upkeep is simulated, so nothing is sent; add --upkeep record or --upkeep live\n$/);
    refused(await ctxsim(['run', study, '--upkeep', 'replay', '--api-key-env', 'X']), /^ctxsim: --api-key-env: upkeep is replayed, so nothing is sent; add --upkeep record or --upkeep live\n$/);
    refused(await ctxsim(['run', study, '--upkeep', 'live', '--base-url', 'not a url']), /^ctxsim: --base-url: expected the http\(s\) URL of an OpenAI-compatible API, e\.g\. http:\/\/localhost:11434\/v1, got not a url\n$/);
    refused(await ctxsim(['run', study, '--upkeep', 'live', '--api-key-env', 'A-B']), /^ctxsim: --api-key-env: expected the name of an environment variable \(letters, digits and _\), got A-B\n$/);
  });

  it('the library opens the network only when the caller says so', async () => {
    const { study } = project([`upkeep: {mode: record, baseURL: '${url()}'}`]);
    expect(await asyncProblems(() => loadStudy(study))).toEqual([expect.stringMatching(/upkeep\.mode: record sends requests to 127\.0\.0\.1:\d+ \(the API key from \$OPENAI_API_KEY\); a study file cannot open the network by itself/)]);
    expect((await loadStudy(study, { upkeep: { mode: 'record' } })).upkeepSource?.mode).toBe('record');
    expect((await loadStudy(study, { upkeep: { mode: 'replay' } })).upkeepSource?.mode).toBe('replay');
  });
});

describe('a study file writes and loads only in its folder or below the working folder', () => {
  /** The three ways out: an absolute path, `..`, and a link inside the folder that points outside. */
  const ways = (p: { dir: string; outside: string }, name: string): [how: string, value: string][] => {
    symlinkSync(p.outside, join(p.dir, 'link'));
    return [
      ['an absolute path', join(p.outside, name)],
      ['..', `../outside/${name}`],
      ['a symbolic link', `link/${name}`],
    ];
  };

  it('out: each way out is exit 2 naming the study, the key and the path, nothing is written; --out writes there', async () => {
    const p = project([]);
    for (const [how, value] of ways(p, 'reports')) {
      writeFileSync(p.study, `scenarios: [scenario.yaml]\npolicies: [full]\nout: '${value}'\n`);
      const r = await ctxsim(['run', p.study]);
      const leads = how === 'a symbolic link' ? ` \\(it leads to ${esc(join(p.outside, 'reports'))}\\)` : '';
      refused(r, new RegExp(`^ctxsim: \\S*study\\.yaml:3:6 out: ${esc(how === 'a symbolic link' ? join(p.dir, value) : join(p.outside, 'reports'))}${leads} is outside the study's folder and the working folder: a study file writes only below them; --out on the command line reaches anywhere\\n$`));
      expect(readdirSync(p.outside), how).toEqual([]);
    }
    expect((await ctxsim(['run', p.study, '--out', join(p.outside, 'reports')])).code).toBe(0);
    expect(existsSync(join(p.outside, 'reports', 'summary.csv'))).toBe(true);
  });

  it('a link that points nowhere outside is followed: writing through it would create its target', async () => {
    const p = project(['out: dangling']);
    symlinkSync(join(p.outside, 'new-folder'), join(p.dir, 'dangling'));
    refused(await ctxsim(['run', p.study]), /out: \S+dangling \(it leads to \S+outside\/new-folder\) is outside/);
    expect(readdirSync(p.outside)).toEqual([]);
  });

  it('the cassette: each way out is exit 2 and nothing is written; --cassette names one there', async () => {
    const p = project([], ['facts']);
    for (const [how, value] of ways(p, 'c.jsonl')) {
      writeFileSync(p.study, `scenarios: [scenario.yaml]\npolicies: [facts]\nupkeep: {baseURL: '${url()}', cassette: '${value}'}\n`);
      const r = await ctxsim(['run', p.study, '--upkeep', 'record', '--out', join(p.dir, 'out')]);
      refused(r, /^ctxsim: \S*study\.yaml:3:\d+ upkeep\.cassette: .+ is outside the study's folder and the working folder: a study file reads and writes its cassette only below them; --cassette on the command line reaches anywhere\n$/);
      expect(readdirSync(p.outside), how).toEqual([]);
      // Replaying reads it: refused the same way.
      refused(await ctxsim(['run', p.study, '--upkeep', 'replay']), /upkeep\.cassette: .* --cassette on the command line reaches anywhere/);
    }
    const cassette = join(p.outside, 'c.jsonl');
    expect((await ctxsim(['run', p.study, '--upkeep', 'record', '--cassette', cassette, '--out', join(p.dir, 'out.json')])).code).toBe(0);
    expect(existsSync(cassette)).toBe(true);
    // A simulated run reads no cassette: the study's is not in the way.
    expect((await ctxsim(['run', p.study, '--out', join(p.dir, 'sim.json')])).code).toBe(0);
  });

  it('a policy module: each way out is exit 2 and the module is not loaded; --policy PATH loads it', async () => {
    const p = project([]);
    // A module that would leave a mark outside if it were ever imported.
    const marker = join(p.outside, 'loaded');
    writeFileSync(join(p.outside, 'mark.mjs'), `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'x');\n${readFileSync(MODULE, 'utf8')}`);
    for (const [how, value] of ways(p, 'mark.mjs')) {
      writeFileSync(p.study, `scenarios: [scenario.yaml]\npolicies:\n  - full\n  - ${value}: {keep: 1}\n`);
      const r = await ctxsim(['run', p.study, '--out', join(p.dir, 'out')]);
      refused(r, new RegExp(`^ctxsim: \\S*study\\.yaml:4:5 policies\\[1\\]: policy module ${esc(value)}: .+ is outside the study's folder and the working folder: a study file loads policy modules only below them; --policy PATH on the command line reaches anywhere\\n$`));
      expect(existsSync(marker), how).toBe(false);
    }
    // With --policy the study's list is not read, so its module is not loaded either.
    expect((await ctxsim(['run', p.study, '--policy', 'full', '--out', join(p.dir, 'full.json')])).code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect((await ctxsim(['run', p.study, '--policy', `${join(p.outside, 'mark.mjs')}:keep=1`, '--out', join(p.dir, 'out.json')])).code).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  it('inside stays allowed: a link within the folder, a path below the working folder, out: - and read-only files anywhere', async () => {
    const p = project([]);
    mkdirSync(join(p.dir, 'real'));
    symlinkSync(join(p.dir, 'real'), join(p.dir, 'inner'));
    writeFileSync(join(p.outside, 'shared.yaml'), readFileSync(SCENARIO, 'utf8').replace('id: upkeep-facts', 'id: shared'));
    // Scenarios are only read: they may lie anywhere.
    writeFileSync(p.study, 'scenarios: [scenario.yaml, ../outside/shared.yaml]\npolicies: [full]\nout: inner/reports\n');
    expect((await ctxsim(['run', p.study])).code).toBe(0);
    expect(readFileSync(join(p.dir, 'real', 'reports', 'summary.csv'), 'utf8')).toContain('shared,');
    // Below the working folder (the repository, where the tests run), a study kept elsewhere may write.
    const below = join(process.cwd(), 'reports', 'confined');
    writeFileSync(p.study, `scenarios: [scenario.yaml]\npolicies: [full]\nout: '${below}'\n`);
    expect((await loadStudy(p.study)).out).toBe(below);
    writeFileSync(p.study, 'scenarios: [scenario.yaml]\npolicies: [full]\nout: "-"\n');
    const r = await ctxsim(['run', p.study, '--format', 'csv']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^scenario,policy,/);
  });

  it('a study names no cache folder: the token and replay caches come from the command line or the environment only', async () => {
    const p = project(['tokenCache: /tmp/elsewhere']);
    refused(await ctxsim(['run', p.study]), /study\.yaml:3:1 tokenCache: unknown key "tokenCache"/);
  });
});

describe('realPath', () => {
  it('follows links as the system does, a target’s .. after its link, and appends what does not exist', () => {
    const root = realPath(tempDir());
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    mkdirSync(join(root, 'c'));
    symlinkSync(join(root, 'a', 'b'), join(root, 'toB'));
    // toB/.. is a, not root: the system takes .. after following the link.
    symlinkSync('toB/../../c', join(root, 'viaB'));
    symlinkSync('nowhere/deeper', join(root, 'dangling'));
    expect(realPath(join(root, 'toB', 'x'))).toBe(join(root, 'a', 'b', 'x'));
    expect(realPath(join(root, 'viaB', 'y'))).toBe(join(root, 'c', 'y'));
    expect(realPath(join(root, 'dangling', 'z'))).toBe(join(root, 'nowhere', 'deeper', 'z'));
    expect(realPath(join(root, 'missing', '..', 'c'))).toBe(join(root, 'c'));
  });
});
