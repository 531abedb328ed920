import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordCli, recording } from './_io.js';
import { serverForFile } from './_openai-server.js';
import { recordingProject, UPKEEP_SCENARIO, upkeepLine } from './_recording.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';
import { builtSince } from './_built.js';

/**
 * Real upkeep, end to end through the command line and a local
 * OpenAI-compatible server (real HTTP, the official client): a recording
 * writes a cassette, and replaying it — with the server stopped, on worker
 * threads, with no socket opened — gives byte-identical outputs; what is
 * stored and sent is the model's text; a response the cassette lacks is exit
 * 2 naming where; the API key is in no file; a dry run and maxUpkeepCost
 * plan a recording without sending anything.
 */

const KEY = 'sk-test-upkeep-secret-0123456789';
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const NO_NETWORK = join(ROOT, 'test', 'fixtures', 'upkeep', 'no-network.mjs');
const built = builtSince('recording/upkeep.ts');

const { server, url } = serverForFile();
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** A folder (a fresh one unless `dir` names one) with the scenario and a study recording through the server (`upkeep:` keys added). */
function project(upkeep = '', dir?: string): string {
  const study = [
    'scenarios: [scenario.yaml]',
    'policies:',
    '  - summary: {threshold: 120, summaryTokens: 60}',
    '  - summary-buffer: {budget: 300, keepRecent: 1}',
    '  - facts',
    '  - retrieval: {topK: 2, recent: 1}',
    upkeepLine(url(), `apiKeyEnv: CTXSIM_TEST_UPKEEP_KEY${upkeep}`),
  ];
  return recordingProject(study, 'fixture', dir);
}

const ctxsim = (args: string[]) => recordCli(recording(args), { CTXSIM_TEST_UPKEEP_KEY: KEY });

/** A folder for the study recorded once (into `rec`), kept until the file's tests end. */
const shared = tempDir();
let recorded: Promise<string> | undefined;

/**
 * The study recorded once, for the tests that read its cassette and its
 * outputs (`rec`) and change neither: the first test that asks records it,
 * through the server as it is then.
 */
function recordedProject(): Promise<string> {
  recorded ??= (async () => {
    const dir = project('', shared);
    expect((await ctxsim(['run', join(dir, 'study.yaml'), '--out', join(dir, 'rec'), '--no-token-cache'])).code).toBe(0);
    return dir;
  })();
  return recorded;
}

/** Every file of a folder, name → text. */
function files(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

describe('upkeep record and replay', () => {
  it('records once, then replays byte-identically with the server stopped and sends nothing more', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const before = server.seen.length;
    const rec = await ctxsim(['run', study, '--out', join(dir, 'rec'), '--token-cache', join(dir, 'cache')]);
    expect(rec.code).toBe(0);
    const sent = server.seen.slice(before);
    expect(sent.length).toBeGreaterThan(10);
    // Each distinct request once: the cassette has a line per request sent.
    const lines = readFileSync(cassette, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(sent.length);
    expect(lines.map((l) => (JSON.parse(l) as { key: string }).key)).toEqual(lines.map((l) => (JSON.parse(l) as { key: string }).key).sort());
    expect(new Set(sent.map((s) => s.path))).toEqual(new Set(['/v1/chat/completions', '/v1/embeddings']));
    expect(sent.every((s) => s.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(rec.stderr).toMatch(/^upkeep: recording about \d+ calls \(\d+ summaries, \d+ extractions, \d+ embeddings\)/m);
    expect(rec.stdout).toContain('Recorded memory (summary, summary-buffer, facts, retrieval: a real model’s responses from');

    // Recording again finds every request in the cassette: nothing sent, the cassette unchanged.
    const text = readFileSync(cassette, 'utf8');
    const again = await ctxsim(['run', study, '--out', join(dir, 'again'), '--token-cache', join(dir, 'cache')]);
    expect(again.code).toBe(0);
    expect(server.seen.length).toBe(before + sent.length);
    expect(readFileSync(cassette, 'utf8')).toBe(text);
    expect(files(join(dir, 'again'))).toEqual(files(join(dir, 'rec')));

    // Replay with the server gone: no socket is even opened.
    await server.stop();
    const connect = vi.spyOn(Socket.prototype, 'connect');
    try {
      const rep = await ctxsim(['run', study, '--upkeep', 'replay', '--out', join(dir, 'rep'), '--token-cache', join(dir, 'cache')]);
      expect(rep.code).toBe(0);
      expect(connect).not.toHaveBeenCalled();
    } finally {
      await server.start();
    }
    expect(files(join(dir, 'rep'))).toEqual(files(join(dir, 'rec')));

    // The key is in no file written and in nothing printed.
    for (const [name, content] of [...files(join(dir, 'rec')), ['upkeep.cassette.jsonl', text] as const]) expect(content.includes(KEY), name).toBe(false);
    expect(rec.stdout + rec.stderr).not.toContain(KEY);
  });

  it('stores and sends the model’s text: a recorded summary without the value loses the fact, with it keeps it', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    expect((await ctxsim(['run', study, '--policy', 'summary:threshold=120,summaryTokens=60', '--out', join(dir, 'rec'), '--no-token-cache'])).code).toBe(0);
    const probes = (out: string) => readFileSync(join(dir, out, 'probes.csv'), 'utf8');
    expect(probes('rec')).toContain('upkeep-facts,"summary:threshold=120,summaryTokens=60",5,email,retained,4,summary,');
    // The summaries the model wrote hold the email; take it out of each and replay.
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const edited = readFileSync(cassette, 'utf8').replaceAll('ravi.k@mail.example', 'his address');
    expect(edited).not.toBe(readFileSync(cassette, 'utf8'));
    writeFileSync(cassette, edited);
    expect((await ctxsim(['run', study, '--policy', 'summary:threshold=120,summaryTokens=60', '--upkeep', 'replay', '--out', join(dir, 'edited'), '--no-token-cache'])).code).toBe(0);
    expect(probes('edited')).toContain('upkeep-facts,"summary:threshold=120,summaryTokens=60",5,email,missing,4,none,retained,false,');
  });

  it('explain --upkeep replay shows each turn as the replayed run did: the summaries the model wrote, their cost, the turn’s cost; it sends nothing', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    const policy = 'summary:threshold=120,summaryTokens=60';
    expect((await ctxsim(['run', study, '--policy', policy, '--out', join(dir, 'results.json'), '--no-token-cache'])).code).toBe(0);
    const { turns } = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { turns: { turn: number; auxInputTokens: number; auxOutputTokens: number; cost: string }[] };
    expect(turns.filter((t) => t.auxInputTokens > 0).length).toBeGreaterThan(0);
    const upkeep = (out: string) => [...out.matchAll(/^ {2}upkeep [a-z ]+: summary on gpt-4o-mini, (\d+) in, (\d+) out: /gm)].reduce((n, m) => [n[0]! + Number(m[1]), n[1]! + Number(m[2])], [0, 0]);
    const before = server.seen.length;
    for (const t of turns) {
      const r = await recordCli(['explain', study, '--policy', policy, '--turn', String(t.turn), '--upkeep', 'replay']);
      expect([r.code, r.stderr]).toEqual([0, '']);
      expect(upkeep(r.stdout)).toEqual([t.auxInputTokens, t.auxOutputTokens]);
      // gpt-4o-mini's prices ($0.15/M, $0.60/M) are whole in 8 decimals: the turn's cost is its record's.
      expect(`${/^turn \d+ cost: \$([\d.]+)/m.exec(r.stdout)![1]}0000`).toBe(t.cost);
    }
    expect(server.seen.length).toBe(before);
    // Simulated, the summary the user waits for is another: what explain showed is the recording.
    const t = turns.find((x) => x.auxInputTokens > 0)!;
    const simulated = await recordCli(['explain', study, '--policy', policy, '--turn', String(t.turn), '--upkeep', 'simulate']);
    expect(upkeep(simulated.stdout)).not.toEqual([t.auxInputTokens, t.auxOutputTokens]);
    expect(await recordCli(['explain', study, '--policy', policy, '--turn', '1', '--upkeep', 'record'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'ctxsim: --upkeep record: explain sends nothing; record with ctxsim run --upkeep record, then explain with --upkeep replay\n',
    });
  });

  it('a response the cassette lacks is exit 2 naming the scenario, policy, turn and the command that records it', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    expect((await ctxsim(['run', study, '--policy', 'facts', '--out', join(dir, 'rec.json'), '--no-token-cache'])).code).toBe(0);
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const lines = readFileSync(cassette, 'utf8').trimEnd().split('\n');
    // Drop the extraction of turn 3 (the spare jars): the only one whose answer is "none" and whose request names jars.
    const keep = lines.filter((l) => !(JSON.parse(l) as { kind: string }).kind.includes('extract') || !l.includes('"text":"none"'));
    expect(keep.length).toBeLessThan(lines.length);
    writeFileSync(cassette, `${keep.join('\n')}\n`);
    const out = join(dir, 'rep');
    const r = await ctxsim(['run', study, '--policy', 'facts', '--upkeep', 'replay', '--out', out, '--no-token-cache']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ctxsim: \S*upkeep\.cassette\.jsonl has no extraction by gpt-4o-mini for scenario upkeep-facts, policy facts, turn \d: record it with `ctxsim run \S*study\.yaml --upkeep record --cassette \S*upkeep\.cassette\.jsonl`\n$/);
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!built)(`replays on worker threads without opening a connection, and simulates without a request${built ? '' : ' (skipped: dist/ is missing or stale)'}`, async () => {
    const dir = project(', retries: 0');
    const study = join(dir, 'study.yaml');
    writeFileSync(join(dir, 'scenario-2.yaml'), readFileSync(UPKEEP_SCENARIO, 'utf8').replace('id: upkeep-facts', 'id: upkeep-facts-2'));
    writeFileSync(study, readFileSync(study, 'utf8').replace('scenarios: [scenario.yaml]', 'scenarios: [scenario.yaml, scenario-2.yaml]'));
    expect((await ctxsim(['run', study, '--out', join(dir, 'rec'), '--no-token-cache'])).code).toBe(0);
    const env = { ...process.env, SOURCE_DATE_EPOCH: '1700000000' };
    const node = (args: string[]) => execFileSync(process.execPath, ['--import', NO_NETWORK, MAIN, ...args, '--no-token-cache', '--quiet'], { env, encoding: 'utf8' });
    // The preload works: a recording through it fails at its first request.
    expect(() => node(['run', study, '--upkeep', 'live', '--out', join(dir, 'live')])).toThrow(/cannot connect/);
    node(['run', study, '--upkeep', 'replay', '--jobs', '2', '--out', join(dir, 'rep')]);
    expect(files(join(dir, 'rep'))).toEqual(files(join(dir, 'rec')));
    // Simulated, in this process: the endpoint sees no request.
    const before = server.seen.length;
    // The budget markdown alone (report.md without its chart links) carries the memory line.
    expect((await ctxsim(['run', study, '--upkeep', 'simulate', '--no-token-cache', '--quiet', '--out', join(dir, 'sim.md')])).code).toBe(0);
    expect(server.seen.length).toBe(before);
    expect(readFileSync(join(dir, 'sim.md'), 'utf8')).toContain('Simulated memory (summary keep 1, summary-buffer keep 1, facts recall 1, retrieval lexical embedding)');
  });

  it('live calls every time and writes no cassette; its outputs are a recording’s', async () => {
    const dir = await recordedProject();
    const study = join(dir, 'study.yaml');
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    const recorded = readFileSync(cassette, 'utf8');
    const before = server.seen.length;
    const live = await ctxsim(['run', study, '--upkeep', 'live', '--out', join(dir, 'live'), '--no-token-cache']);
    expect(live.code).toBe(0);
    expect(server.seen.length - before).toBe(recorded.trimEnd().split('\n').length);
    expect(readFileSync(cassette, 'utf8')).toBe(recorded);
    const differ = [...files(join(dir, 'live'))].filter(([f, text]) => text !== files(join(dir, 'rec')).get(f)).map(([f]) => f);
    // Only where the responses came from differs: the reports name the live recording instead of the cassette.
    expect(files(join(dir, 'live')).get('turns.csv')).toBe(files(join(dir, 'rec')).get('turns.csv'));
    expect(files(join(dir, 'live')).get('report.md')).toContain('a real model’s responses from the live recording');
    expect(differ.every((f) => /\.(md|html|json|txt|vl\.json|svg|png)$/.test(f))).toBe(true);
  });

  it('--dry-run tells how many calls a recording needs and their most cost, and sends and writes nothing', async () => {
    const dir = project();
    const before = server.seen.length;
    const r = await ctxsim(['run', join(dir, 'study.yaml'), '--dry-run', '--no-token-cache']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^a recording would send (\d+) calls \((\d+) summaries, (\d+) extractions, (\d+) embeddings\), \d+ input tokens and at most \d+ output tokens, at most \$\d+\.\d{4} to http:\/\/127\.0\.0\.1:\d+\/v1\n$/);
    const [, calls, ...kinds] = /(\d+) calls \((\d+) summaries, (\d+) extractions, (\d+) embeddings\)/.exec(r.stdout)!.map(Number);
    expect(kinds.reduce((a, b) => a + b, 0)).toBe(calls);
    // Six turns: an extraction each, and an embedding for each user query and stored message.
    expect(kinds[1]).toBe(6);
    expect(server.seen.length).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(['scenario.yaml', 'study.yaml']);
    expect((await ctxsim(['run', join(dir, 'study.yaml'), '--dry-run', '--upkeep', 'replay'])).code).toBe(2);
  });

  it('maxUpkeepCost refuses a recording planned to cost more, and stops one that reaches it, keeping what it recorded', async () => {
    const refused = project(', maxUpkeepCost: 0.000001');
    const before = server.seen.length;
    const r = await ctxsim(['run', join(refused, 'study.yaml'), '--out', join(refused, 'out'), '--no-token-cache']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ctxsim: upkeep: recording needs about \d+ calls .* at most \$\d\.\d{4}, more than maxUpkeepCost \$0\.000001; raise it or record fewer scenarios or policies\n$/m);
    expect(server.seen.length).toBe(before);
    expect(existsSync(join(refused, 'upkeep.cassette.jsonl'))).toBe(false);

    // The plan fits, but the endpoint bills far more than the words sent: the recording stops at the limit.
    const stopped = project(', maxUpkeepCost: 0.01');
    const sentBefore = server.seen.length;
    server.usageFactor = 5000;
    let stderr: string;
    try {
      const s = await ctxsim(['run', join(stopped, 'study.yaml'), '--out', join(stopped, 'out'), '--no-token-cache']);
      expect(s.code).toBe(2);
      stderr = s.stderr;
    } finally {
      server.usageFactor = 1;
    }
    const m = /^ctxsim: upkeep: the recording reached maxUpkeepCost \$0\.01 after (?:1 response|(\d+) responses) \(\$\d+\.\d{4}\); (?:the response received is|the \d+ responses received are) kept in \S*upkeep\.cassette\.jsonl\.journal: run the same command again to carry on\n$/m.exec(stderr);
    expect(m, stderr).not.toBeNull();
    // Every response the server sent back is in the journal, and the message counts them all; the cassette is written when the recording completes.
    expect(existsSync(join(stopped, 'upkeep.cassette.jsonl'))).toBe(false);
    const kept = readFileSync(join(stopped, 'upkeep.cassette.jsonl.journal'), 'utf8').trimEnd().split('\n');
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toHaveLength(server.seen.length - sentBefore);
    expect(Number(m![1] ?? 1)).toBe(kept.length);
    expect(existsSync(join(stopped, 'out'))).toBe(false);
  });

  it('sends the study’s prompts', async () => {
    const dir = project(", prompts: {summary: 'Summarize in {summaryTokens} tokens or fewer.', extract: 'List facts as name: value.'}");
    const before = server.seen.length;
    expect((await ctxsim(['run', join(dir, 'study.yaml'), '--policy', 'summary:threshold=120,summaryTokens=60', '--policy', 'facts', '--out', join(dir, 'out.json'), '--no-token-cache'])).code).toBe(0);
    const instructions = new Set(server.seen.slice(before).flatMap((s) => (s.body.messages ? [s.body.messages[0]!.content] : [])));
    expect(instructions).toEqual(new Set(['Summarize in 60 tokens or fewer.', 'List facts as name: value.']));
  });

  it('a refused key is exit 2 naming the variable, and leaves no cassette and no reports', async () => {
    const dir = project();
    for (let i = 0; i < 20; i++) server.faults.push({ status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error' } } });
    const r = await ctxsim(['run', join(dir, 'study.yaml'), '--policy', 'facts', '--out', join(dir, 'out'), '--no-token-cache']);
    server.faults.length = 0;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ctxsim: upkeep endpoint http:\/\/127\.0\.0\.1:\d+\/v1: extract by gpt-4o-mini: 401 \(.*\): check the key in CTXSIM_TEST_UPKEEP_KEY\n$/m);
    expect(r.stderr).not.toContain(KEY);
    expect(readdirSync(dir).sort()).toEqual(['scenario.yaml', 'study.yaml']);
  });

  it('refuses to record in shards, and names a cassette that is missing or damaged at its line', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    const shard = await ctxsim(['run', study, '--shard', '1/2', '--out', join(dir, 'out')]);
    expect(shard.code).toBe(2);
    expect(shard.stderr).toContain('--shard: record the upkeep cassette first');
    const missing = await ctxsim(['run', study, '--upkeep', 'replay', '--out', join(dir, 'out')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^ctxsim: upkeep cassette \S*upkeep\.cassette\.jsonl does not exist: record it with `ctxsim run \S*study\.yaml --upkeep record --cassette \S*upkeep\.cassette\.jsonl`\n$/);
    writeFileSync(join(dir, 'bad.jsonl'), '{"key":"00","kind":"summary","model":"m","text":"x","usage":{"input":1,"output":1}}\n');
    const bad = await ctxsim(['run', study, '--upkeep', 'replay', '--cassette', join(dir, 'bad.jsonl'), '--out', join(dir, 'out')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.jsonl:1:1 key: expected 32 hex digits, got "00"\n$/);
    const flag = await ctxsim(['run', study, '--upkeep', 'sometimes']);
    expect(flag.stderr).toBe('ctxsim: --upkeep: expected one of simulate|record|replay|live, got sometimes\n');
    const simulated = await ctxsim(['run', study, '--upkeep', 'simulate', '--cassette', 'x.jsonl']);
    expect(simulated.stderr).toContain('--cassette: upkeep is simulated, so no cassette is read or written');
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('study keys are checked at their place, every problem at once', async () => {
    const low = await ctxsim(['run', join(project(', concurrency: 0'), 'study.yaml')]);
    expect(low.code).toBe(2);
    expect(low.stderr).toMatch(/^ctxsim: \S*study\.yaml:7:\d+ upkeep\.concurrency: expected a number ≥ 1, got 0\n$/);
    const placeholder = await ctxsim(['run', join(project(", concurrency: 0, prompts: {summary: 'In {summaryTokens} tokens, drop {facts}.', extract: 'Facts of {facts}'}"), 'study.yaml')]);
    expect(placeholder.code).toBe(2);
    expect(placeholder.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^ctxsim: \S*study\.yaml:7:\d+ upkeep\.concurrency: expected a number ≥ 1, got 0$/),
      expect.stringMatching(/^ctxsim: \S*study\.yaml:7:\d+ upkeep\.prompts\.summary: unknown placeholder \{facts\} \(this prompt may use \{summaryTokens\}\), got "In \{summaryTokens\} tokens, drop \{facts\}\."$/),
      expect.stringMatching(/^ctxsim: \S*study\.yaml:7:\d+ upkeep\.prompts\.extract: unknown placeholder \{facts\} \(this prompt takes none\), got "Facts of \{facts\}"$/),
    ]);
  });

  it('the gate tells when upkeep changed from simulated to recorded, and when the cassette changed; its accept command keeps --upkeep', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    const baseline = join(dir, 'baseline.json');
    const common = ['--policy', 'facts', '--no-token-cache', '--quiet'];
    // The runs write results.json: the baselines and the cassette are what the gate reads.
    expect((await ctxsim(['run', study, ...common, '--upkeep', 'simulate', '--out', join(dir, 'sim.json'), '--save-baseline', baseline])).code).toBe(0);
    expect((await ctxsim(['run', study, ...common, '--out', join(dir, 'rec.json')])).code).toBe(0);
    const check = await ctxsim(['check', study, ...common, '--upkeep', 'replay', '--baseline', baseline]);
    expect(check.stdout).toMatch(/upkeep: simulated → recorded \S*upkeep\.cassette\.jsonl sha256:[0-9a-f]{12}/);
    expect((await ctxsim(['run', study, ...common, '--upkeep', 'replay', '--out', join(dir, 'rep.json'), '--save-baseline', baseline, '--force'])).code).toBe(0);
    const cassette = join(dir, 'upkeep.cassette.jsonl');
    writeFileSync(cassette, readFileSync(cassette, 'utf8').replace('"text":"none"', '"text":"note: none of it"'));
    const changed = await ctxsim(['check', study, ...common, '--upkeep', 'replay', '--baseline', baseline]);
    expect(changed.stdout).toMatch(/upkeep: recorded \S+ sha256:([0-9a-f]{12}) → recorded \S+ sha256:(?!\1)[0-9a-f]{12}/);
    // A check that fails gives the command that accepts the change with the upkeep flags it ran with: the baseline it saves is the recorded run's.
    const cheap = join(dir, 'cheap-prices.json');
    writeFileSync(cheap, JSON.stringify({ 'gpt-4o-mini': { input_cost_per_token: 1e-9, cache_read_input_token_cost: 1e-10, output_cost_per_token: 1e-9 } }));
    expect((await ctxsim(['run', study, ...common, '--upkeep', 'replay', '--prices', cheap, '--out', join(dir, 'cheap.json'), '--save-baseline', baseline, '--force'])).code).toBe(0);
    const dearer = await ctxsim(['check', study, ...common, '--upkeep', 'replay', '--baseline', baseline]);
    expect(dearer.code).toBe(1);
    const accept = /^ {4}npx ctxsim (run .*)$/m.exec(dearer.stdout)![1]!.split(' ');
    expect(accept).toEqual(['run', study, '--policy', 'facts', '--upkeep', 'replay', '--save-baseline', baseline, '--force']);
    expect((await ctxsim([...accept, '--no-token-cache', '--quiet', '--out', join(dir, 'accepted.json')])).code).toBe(0);
    expect((await ctxsim(['check', study, ...common, '--upkeep', 'replay', '--baseline', baseline])).code).toBe(0);
  });

  it('upkeep models unknown to the builtin table are priced by a --prices table, whose entries the study is checked against', async () => {
    const dir = project();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, readFileSync(study, 'utf8').replace('  - facts\n', '  - facts: {extractModel: llama3.2}\n'));
    const prices = join(dir, 'local-prices.json');
    writeFileSync(prices, JSON.stringify({ 'llama3.2': { litellm_provider: 'ollama', mode: 'chat', input_cost_per_token: 0, output_cost_per_token: 0, max_input_tokens: 8192 } }));
    const unknown = await ctxsim(['run', study, '--dry-run']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^ctxsim: \S*study\.yaml:5:27 policies\[2\]\.facts\.extractModel: unknown model "llama3\.2"/);
    const planned = await ctxsim(['run', study, '--dry-run', '--prices', prices]);
    expect(planned.code).toBe(0);
    expect(planned.stdout).toMatch(/, 6 extractions, /);
  });

  it('shards replaying the cassette merge into exactly the recording’s outputs', async () => {
    const dir = await recordedProject();
    const study = join(dir, 'study.yaml');
    for (const k of [1, 2]) expect((await ctxsim(['run', study, '--upkeep', 'replay', '--shard', `${k}/2`, '--out', join(dir, `p${k}`), '--no-token-cache', '--quiet'])).code).toBe(0);
    expect((await ctxsim(['merge', join(dir, 'p1'), join(dir, 'p2'), '--out', join(dir, 'merged'), '--quiet'])).code).toBe(0);
    expect(files(join(dir, 'merged'))).toEqual(files(join(dir, 'rec')));
  });
});
