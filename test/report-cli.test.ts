import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import type { IO } from '../src/cli/_io.js';
import { resultsMeta } from '../src/study/pipeline.js';
import { csvHeader } from '../src/records/csv.js';
import { TURN_RECORD } from '../src/records/registry.js';
import { ROOT } from './_shared.js';
import { tempDir } from './_tmp.js';

const tmp = mkdtempSync(join(tmpdir(), 'ctxsim-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function cli(args: string[], isTTY = false): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: IO = { out: (t) => void (out += t), err: (t) => void (err += t), isTTY };
  const code = await runMain(args, io);
  return { code, out, err };
}

const STUDY = 'test/fixtures/report/study.yaml';
/**
 * A quick study from flags: the shipped scenarios, two policies, chars4; no
 * cache, so a rerun of the suite finds no units of an earlier run in the
 * folder's `.ctxsim-cache/` (and says nothing of them).
 */
const SMALL = ['--scenario', 'scenarios/{kavya-late-order,noah-amnesia}.yaml', '--policy', 'full', '--policy', 'window-turns:turns=2', '--tokenizer', 'chars4', '--no-token-cache'];

const FILES = [
  'cost-breakdown.png', 'cost-breakdown.svg', 'cost-breakdown.vl.json',
  'cost-by-turn.png', 'cost-by-turn.svg', 'cost-by-turn.vl.json',
  'policies.csv', 'probes.csv', 'report.html', 'report.md', 'results.json',
  'retention-by-age.png', 'retention-by-age.svg', 'retention-by-age.vl.json',
  'retention-vs-cost.png', 'retention-vs-cost.svg', 'retention-vs-cost.vl.json',
  'summary.csv', 'tokens-by-turn.png', 'tokens-by-turn.svg', 'tokens-by-turn.vl.json', 'turns.csv', 'violations.csv',
];

describe('ctxsim run writes the reports', () => {
  it('writes every output to the folder, and the same bytes on a rerun (results.json: all but meta)', async () => {
    const a = await cli(['run', ...SMALL, '--out', join(tmp, 'a')]);
    expect(a.code).toBe(0);
    expect(readdirSync(join(tmp, 'a')).sort()).toEqual(FILES);
    expect(a.out.split('\n')[0]).toMatch(/^gpt-4o-mini · prices of \S+ · tokenizer chars4 · 2 conversations$/);
    expect(a.out.split('\n')[1]).toMatch(/^policy\s+cost\/1k conv USD\s+vs full\s+retention\s+pareto/);
    expect(a.out).toMatch(/\n\nVerdict: Use full: no cheaper policy keeps at least 95% of probed facts\. On 2 conversations, /);
    expect(a.err.split('\n')).toEqual(['[1/2] kavya-late-order', '[2/2] noah-amnesia', `wrote 23 files to ${join(tmp, 'a')}/`, '']);

    const b = await cli(['run', ...SMALL, '--out', join(tmp, 'b'), '--quiet']);
    expect(b.err).toBe('');
    for (const f of FILES) {
      const [x, y] = [readFileSync(join(tmp, 'a', f)), readFileSync(join(tmp, 'b', f))];
      if (f !== 'results.json') expect(x.equals(y), f).toBe(true);
      else expect(x.toString().split('\n').filter((l) => !l.startsWith(' "meta": '))).toEqual(y.toString().split('\n').filter((l) => !l.startsWith(' "meta": ')));
    }
    const md = readFileSync(join(tmp, 'a', 'report.md'), 'utf8');
    expect(md).toContain('![Retention vs cost per 1,000 conversations](retention-vs-cost.png)');
  });

  it('reads a study file: its scenarios, policies and tokenizer', async () => {
    const r = await cli(['run', STUDY, '--out', '-', '--format', 'json', '--no-token-cache']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.study.studyFile).toBe('test/fixtures/report/study.yaml');
    expect(doc.study.policies.map((p: { name: string }) => p.name)).toEqual(['full', 'window-turns:turns=2', 'window-turns:turns=6', 'window-tokens:budget=300', 'window:turns=10,budget=500']);
    expect(r.err).toBe('[1/3] kavya-late-order\n[2/3] noah-amnesia\n[3/3] maya-long-support\n');
  });

  it('says what ran: report.html names the lists the command line replaced, of the default study or of a study file; results.json holds them', async () => {
    const tmp = tempDir();
    const studyOf = (dir: string) => /<dt>study<\/dt><dd>([^<]*)<\/dd>/.exec(readFileSync(join(tmp, dir, 'report.html'), 'utf8'))![1];
    // --scenario and --policy replace the default study's scenarios and policies: it is not the built-in default study that ran.
    expect((await cli(['run', ...SMALL, '--out', join(tmp, 'flags'), '--quiet'])).code).toBe(0);
    expect(studyOf('flags')).toBe('built-in default study; from the command line: scenarios (--scenario), policies (--policy)');
    expect(JSON.parse(readFileSync(join(tmp, 'flags', 'results.json'), 'utf8')).study.fromCommandLine).toEqual(['scenarios', 'policies']);
    // A study file whose policies --policy replaced, and whose model --model did.
    expect((await cli(['run', STUDY, '--policy', 'full', '--model', 'gpt-4o', '--out', join(tmp, 'study'), '--quiet', '--no-token-cache'])).code).toBe(0);
    expect(studyOf('study')).toBe('test/fixtures/report/study.yaml; from the command line: policies (--policy), models (--model)');
    // The study file alone: its name, and nothing in results.json.
    expect((await cli(['run', STUDY, '--out', join(tmp, 'plain'), '--quiet', '--no-token-cache'])).code).toBe(0);
    expect(studyOf('plain')).toBe('test/fixtures/report/study.yaml');
    expect(JSON.parse(readFileSync(join(tmp, 'plain', 'results.json'), 'utf8')).study).not.toHaveProperty('fromCommandLine');
  });

  it('--out - prints the per-turn CSV and nothing else on stdout', async () => {
    const r = await cli(['run', ...SMALL, '--out', '-']);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(`${lines[0]}\n`).toBe(csvHeader(TURN_RECORD.csv));
    // kavya 3 turns + noah 5 turns, under 2 policies, plus the header and the final newline.
    expect(lines).toHaveLength(1 + 16 + 1);
    expect(r.err).toBe('[1/2] kavya-late-order\n[2/2] noah-amnesia\n');
  });

  it('--out - --format json|md|html picks another format', async () => {
    const json = await cli(['run', ...SMALL, '--out', '-', '--format', 'json', '--quiet']);
    expect(JSON.parse(json.out).turns).toHaveLength(16);
    expect(json.err).toBe('');
    const md = await cli(['run', ...SMALL, '--out', '-', '--format', 'md', '--quiet']);
    expect(md.out.startsWith('# ctxsim report\n')).toBe(true);
    expect(md.out).not.toContain('![');
    const html = await cli(['run', ...SMALL, '--out', '-', '--format', 'html', '--quiet']);
    expect(html.out.match(/<figure /g)).toHaveLength(5);
  });

  it('--out FILE writes that one file, its format from the extension', async () => {
    const dir = join(tmp, 'single');
    const r = await cli(['run', ...SMALL, '--out', join(dir, 'report.html'), '--quiet']);
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).toEqual(['report.html']);
    expect(readFileSync(join(dir, 'report.html'), 'utf8').startsWith('<!doctype html>')).toBe(true);
    expect(r.out.split('\n')[1]!.startsWith('policy')).toBe(true);
    await cli(['run', ...SMALL, '--out', join(dir, 'turns.csv'), '--quiet']);
    expect(readFileSync(join(dir, 'turns.csv'), 'utf8').startsWith('scenario,policy,turn,')).toBe(true);
    await cli(['run', ...SMALL, '--out', join(dir, 'all.json'), '--quiet']);
    expect(JSON.parse(readFileSync(join(dir, 'all.json'), 'utf8')).schemaVersion).toBe(1);
  });

  it('--format with a folder is a usage error (exit 2), before anything runs', async () => {
    const dir = join(tmp, 'folder');
    mkdirSync(dir);
    const r = await cli(['run', ...SMALL, '--out', dir, '--format', 'md']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`ctxsim: --format md: names the format of one output file, but --out ${dir} is a folder\n`);
    expect(r.out).toBe('');
  });

  it('redraws one progress line on a terminal', async () => {
    const r = await cli(['run', ...SMALL, '--out', '-'], true);
    expect(r.err).toBe('\r\x1b[K[1/2] kavya-late-order\r\x1b[K[2/2] noah-amnesia\n');
  });
});

describe('ctxsim table', () => {
  it('prints the budget table as markdown, or CSV, and nothing else', async () => {
    const md = await cli(['table', ...SMALL, '--quiet']);
    expect(md.code).toBe(0);
    // Markdown by default: what fits a docs page.
    expect(md.out.split('\n').slice(0, 4)).toEqual([
      'gpt-4o-mini · prices of 2026-03-11 · tokenizer chars4 · 2 conversations'.replace('2026-03-11', md.out.match(/prices of (\S+)/)![1]!),
      '',
      '| policy               | cost / 1,000 conversations |    retention | vs full | pareto |',
      '| -------------------- | -------------------------: | -----------: | ------: | ------ |',
    ]);
    const csv = await cli(['table', ...SMALL, '--format', 'csv']);
    expect(csv.out.split('\n')[0]).toBe('policy,tokens_turn_1,tokens_turn_5,cost_per_conversation_usd,cost_per_1000_conversations_usd,probes,retained,retention,overflow_turns,scenarios,overflow_probes,model,upkeep_tokens_per_conversation,pareto');
    expect(csv.out.split('\n')).toHaveLength(4);
    expect(csv.err).toBe('[1/2] kavya-late-order\n[2/2] noah-amnesia\n');
  });

  it('--columns and --sort choose the columns and rows, over the study’s budgetColumns and budgetSort; a wrong name says the nearest', async () => {
    const wide = await cli(['table', ...SMALL, '--quiet', '--columns', 'policy, tokens_turn_5,retention,latency_p95_ms', '--sort', 'retention']);
    expect(wide.out.split('\n').slice(2, 6)).toEqual([
      '| policy               | tokens @ turn 5 |    retention | latency p95 |',
      '| -------------------- | --------------: | -----------: | ----------: |',
      '| full                 |              56 | 100.0% (1/1) |      485 ms |',
      '| window-turns:turns=2 |              36 |   0.0% (0/1) |      485 ms |',
    ]);
    const csv = await cli(['table', ...SMALL, '--quiet', '--format', 'csv', '--columns', 'policy,vs_full', '--sort', 'cost']);
    expect(csv.out).toBe('policy,vs_full\nwindow-turns:turns=2,-0.0523\nfull,0\n');
    const dir = tempDir();
    const study = join(dir, 'study.yaml');
    writeFileSync(study, `scenarios: ['${join(ROOT, 'scenarios', 'noah-amnesia.yaml')}']\npolicies: [full, window]\ntokenizer: chars4\nbudgetColumns: [policy, retention]\nbudgetSort: name\nout: out\n`);
    expect((await cli(['table', study, '--quiet', '--no-token-cache'])).out.split('\n').slice(4, 6)).toEqual(['| full   | 100.0% (1/1) |', '| window | 100.0% (1/1) |']);
    expect((await cli(['table', study, '--quiet', '--no-token-cache', '--columns', 'model'])).out.split('\n')[2]).toBe('| model       |');
    // report.md's budget table follows the study.
    expect((await cli(['run', study, '--quiet', '--no-token-cache'])).code).toBe(0);
    expect(readFileSync(join(dir, 'out', 'report.md'), 'utf8')).toContain('## Budget per policy\n\ngpt-4o-mini · prices of');
    expect(readFileSync(join(dir, 'out', 'report.md'), 'utf8')).toContain('| policy |    retention |\n| ------ | -----------: |\n| full   | 100.0% (1/1) |\n| window | 100.0% (1/1) |\n');
    for (const [args, said] of [
      [['--columns', 'policy,retension'], 'ctxsim: --columns: no budget table column "retension" (did you mean retention?); the columns are listed in ctxsim table --help'],
      [['--columns', ','], 'ctxsim: --columns: name at least one column, e.g. --columns policy,cost_per_1000_conversations_usd,retention'],
      [['--sort', 'price'], 'ctxsim: --sort: expected one of cost|retention|name|study, got price'],
    ] as const) {
      const bad = await cli(['table', ...SMALL, ...args]);
      expect(bad.code).toBe(2);
      expect(bad.err).toBe(`${said}\n`);
    }
    for (const [key, said] of [
      ['budgetColumns: [policy, retained, polcy]', /^ctxsim: \S+study\.yaml:2:\d+ budgetColumns\[2\]: no budget table column "polcy" \(did you mean policy\?\); the columns are listed in ctxsim table --help\n$/],
      ['budgetSort: cheapest', /^ctxsim: \S+study\.yaml:2:\d+ budgetSort: expected one of cost\|retention\|name\|study, got "cheapest"\n$/],
    ] as const) {
      writeFileSync(study, `policies: [full]\n${key}\n`);
      const bad = await cli(['table', study]);
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(said);
    }
  });

  it('rejects another format', async () => {
    const r = await cli(['table', ...SMALL, '--format', 'html']);
    expect(r.code).toBe(2);
    expect(r.err).toBe('ctxsim: --format: "html" is not one of "md", "csv"\n');
  });
});

describe('results.json meta', () => {
  it('takes its time from SOURCE_DATE_EPOCH when set', () => {
    expect(resultsMeta('2026-01-01', { SOURCE_DATE_EPOCH: '1767225600' }).generatedAt).toBe('2026-01-01T00:00:00.000Z');
    const m = resultsMeta('2026-01-01', {}, () => new Date(Date.UTC(2026, 5, 7, 8, 9, 10)));
    expect(m).toEqual({ tool: 'ctxsim', version: JSON.parse(readFileSync('package.json', 'utf8')).version, priceTable: '2026-01-01', generatedAt: '2026-06-07T08:09:10.000Z' });
  });
});
