import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { callsCaption, callsDisplay, detailsDisplay } from '../src/report/budget.js';
import { reportHtml } from '../src/report/html.js';
import { reportMarkdown } from '../src/report/markdown.js';
import { latencyFormat } from '../src/records/format.js';
import { parseResultsJson } from '../src/records/json.js';
import { capture } from './_io.js';
import { goldenRun } from './fixtures/report/run.js';
import { resultsOf, turn } from './fixtures/report/records.js';
import { tempDir } from './_tmp.js';

/**
 * Agent runs: a turn is a loop of model calls, so its latency runs to
 * minutes. Latency columns are in seconds when any of their values is 10 s or
 * more, and report.md and report.html add a table of the model calls per
 * policy when some turn made more than one.
 */

/** A run's description for the reports (model, prices, tokenizer). */
const { info } = await goldenRun();

describe('latency columns', () => {
  it('are in milliseconds while every value is under 10 s, else all in seconds with one decimal', () => {
    expect([0, 670, 9_999].map(latencyFormat([0, 670, 9_999]))).toEqual(['0 ms', '670 ms', '9,999 ms']);
    const s = latencyFormat([670, 1_106_216]);
    expect([670, 1_106_216, 10_000, 1_150, 1_149, 49].map(s)).toEqual(['0.7 s', '1,106.2 s', '10.0 s', '1.2 s', '1.1 s', '0.0 s']);
  });
});

describe('the model-call table, on hand-made records', () => {
  // p: turn 1 makes 3 calls (300 prompt tokens; $0.0000036 of calls and $0.000005 of upkeep; 45 s), turn 2 one (150 tokens, $0.0000018, 7 s).
  // q: turn 1 makes 2 calls (100 tokens, $0.000001, 3 s), turn 2 one (50 tokens, $0.0000005, 1 s).
  const results = resultsOf([
    turn({ scenario: 'a', policy: 'p', turn: 1, calls: 3, inputTokens: 300, costInput: 3_000_000n, costCached: 600_000n, costOutput: 900_000n, costUpkeep: 5_000_000n, latencyMs: 45_000 }),
    turn({ scenario: 'a', policy: 'p', turn: 2, calls: 1, inputTokens: 150, costInput: 1_500_000n, costOutput: 300_000n, latencyMs: 7_000 }),
    turn({ scenario: 'a', policy: 'q', turn: 1, calls: 2, inputTokens: 100, costInput: 1_000_000n, latencyMs: 3_000 }),
    turn({ scenario: 'a', policy: 'q', turn: 2, calls: 1, inputTokens: 50, costInput: 500_000n, latencyMs: 1_000 }),
  ]);

  it('gives calls, calls per turn, and prompt tokens, cost and latency per call, figured by hand', () => {
    const t = callsDisplay(results)!;
    expect(t.header).toEqual(['policy', 'calls', 'calls / turn', 'prompt tokens / call', 'cost / call', 'latency / call']);
    // Cheapest first, as the budget table.
    expect(t.rows).toEqual([
      // q: 3 calls over 2 turns; 150 / 3 = 50 tokens; 1,500,000 / 3 = 500,000 pico-dollars (9 decimals: three significant digits of it);
      // 4,000 ms / 3 = 1,333 ms, in seconds as the column is (p's is over 10 s).
      ['q', '3', '1.5', '50', '$0.000000500', '1.3 s'],
      // p: 4 calls over 2 turns; 450 / 4 = 112.5 → 113 tokens; (3,000,000 + 600,000 + 900,000 + 1,500,000 + 300,000) / 4 = 1,575,000 pico-dollars
      // (upkeep apart); 52,000 ms / 4 = 13.0 s.
      ['p', '4', '2.0', '113', '$0.000001575', '13.0 s'],
    ]);
    expect([...t.numeric]).toEqual([1, 2, 3, 4, 5]);
  });

  it('shows the 95th-percentile turn latency in seconds: p’s turns took 45 s and 7 s', () => {
    // Nearest rank over two turns: the second, 45,000 ms; q's 3,000 ms, in seconds too.
    expect(detailsDisplay(results).rows.map((r) => [r[0], r[1]])).toEqual([
      ['q', '3.0 s'],
      ['p', '45.0 s'],
    ]);
  });

  it('is in report.md and report.html, captioned, after the latency, storage and safety table', () => {
    const md = reportMarkdown(results, info);
    const caption = callsCaption(results);
    expect(caption).toBe(
      "calls: model calls over every turn (one after the user message, one after each round of tool calls) · calls / turn: their mean per turn · prompt tokens / call: input tokens sent per call, cached included · cost / call: what the calls cost (uncached and cached input, output; upkeep apart) per call · latency / call: the turns' latency over their calls, synchronous upkeep included (latency is recorded per turn, so there is no percentile per call)",
    );
    // With scenario weights (the policies then carry a weighted cost of 1,000), the caption says they do not apply here.
    expect(callsCaption({ policies: results.policies.map((p) => ({ ...p, costPer1000: 0n })) })).toBe(`${caption} · each call counts once: scenario weights do not apply`);
    expect(md).toContain(`## Model calls per policy\n\n${caption}\n\n| policy | calls | calls / turn | prompt tokens / call |  cost / call | latency / call |\n`);
    expect(md).toContain('\n| p      |     4 |          2.0 |                  113 | $0.000001575 |         13.0 s |\n');
    expect(md.indexOf('## Latency, storage and safety per policy')).toBeLessThan(md.indexOf('## Model calls per policy'));
    const html = reportHtml(results, info, []);
    expect(html).toContain('<section id="calls">\n<h2>Model calls per policy</h2>\n');
    expect(html).toContain('<td>p</td><td class="num">4</td><td class="num">2.0</td><td class="num">113</td><td class="num">$0.000001575</td><td class="num">13.0 s</td>');
    expect(html.indexOf('<section id="details">')).toBeLessThan(html.indexOf('<section id="calls">'));
  });

  it('is left out when every turn made one call', () => {
    const chat = resultsOf([turn({ scenario: 'a', policy: 'p', turn: 1, calls: 1, inputTokens: 10 })]);
    expect(callsDisplay(chat)).toBeNull();
    expect(reportMarkdown(chat, info)).not.toContain('Model calls');
    expect(reportHtml(chat, info, [])).not.toContain('id="calls"');
  });
});

/** An agent's task: one turn of three model calls (two rounds of tool calls, then the reply), then a question (one call). */
const AGENT = readFileSync('test/fixtures/agent-task.yaml', 'utf8');

/** Every call takes 20 s to its first token; prefill and decode are all but instant (under a millionth of a millisecond a token). */
const STUDY = `model: gpt-4o-mini
tokenizer: chars4
latency:
  default: {ttftMs: 20000, prefillTps: 1000000000, decodeTps: 1000000000}
scenarios:
  - agent.yaml
policies:
  - full
  - window-tokens: {budget: 60}
`;

describe('an agent study through ctxsim run', () => {
  it('writes the model-call table and latencies in seconds to report.md and report.html, matching the turn records', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agent.yaml'), AGENT);
    writeFileSync(join(dir, 'study.yaml'), STUDY);
    const out = join(dir, 'out');
    const io = capture();
    expect(await runMain(['run', join(dir, 'study.yaml'), '--out', out, '--quiet', '--no-token-cache'], io)).toBe(0);
    const { results } = parseResultsJson(readFileSync(join(out, 'results.json'), 'utf8'), 'results.json');
    // Turn 1: three calls of 20 s each; turn 2: one. Prompt and output tokens as chars4 counts them (gpt-4o-mini: $0.15/M input, $0.60/M output, no cache under 1,024 tokens).
    expect(results.turns.map((t) => [t.policy, t.turn, t.calls, t.latencyMs, t.inputTokens, t.cachedTokens, t.outputTokens, t.costUpkeep])).toEqual([
      ['full', 1, 3, 60_000, 138, 0, 45, 0n],
      ['full', 2, 1, 20_000, 106, 0, 3, 0n],
      ['window-tokens:budget=60', 1, 3, 60_000, 138, 0, 45, 0n],
      ['window-tokens:budget=60', 2, 1, 20_000, 8, 0, 3, 0n],
    ]);
    const md = readFileSync(join(out, 'report.md'), 'utf8');
    // Names in text cells may break where they have parts (<wbr>): the cells' text is the same.
    const html = readFileSync(join(out, 'report.html'), 'utf8').replaceAll('<wbr>', '');
    // Latency p95: the longer of the two turns, 60,000 ms.
    for (const policy of ['full', 'window-tokens:budget=60']) {
      expect(md).toMatch(new RegExp(`^\\| ${policy} +\\| +60\\.0 s \\|`, 'm'));
      expect(html).toContain(`<td>${policy}</td><td class="num">60.0 s</td>`);
    }
    // 4 calls over 2 turns each; 80,000 ms over 4 calls is 20.0 s a call.
    // full: (138 + 106) / 4 = 61 tokens; (138 + 106) × $0.15/M + (45 + 3) × $0.60/M = $0.0000654, / 4 = $0.00001635 → $0.0000164.
    // window-tokens:budget=60: (138 + 8) / 4 = 36.5 → 37 tokens; 146 × $0.15/M + 48 × $0.60/M = $0.0000507, / 4 = $0.000012675 → $0.0000127
    // (seven decimals: three significant digits of the column's smaller value).
    // Cheapest first, as the budget table.
    const rows = [
      ['window-tokens:budget=60', '4', '2.0', '37', '$0.0000127', '20.0 s'],
      ['full', '4', '2.0', '61', '$0.0000164', '20.0 s'],
    ];
    expect(md).toContain(
      [
        '| policy                  | calls | calls / turn | prompt tokens / call | cost / call | latency / call |',
        '| ----------------------- | ----: | -----------: | -------------------: | ----------: | -------------: |',
        '| window-tokens:budget=60 |     4 |          2.0 |                   37 |  $0.0000127 |         20.0 s |',
        '| full                    |     4 |          2.0 |                   61 |  $0.0000164 |         20.0 s |',
      ].join('\n'),
    );
    for (const cells of rows) expect(html).toContain(`<tr>${cells.map((c, i) => (i ? `<td class="num">${c}</td>` : `<td>${c}</td>`)).join('')}</tr>`);
  });
});
