import { describe, expect, it } from 'vitest';
import { costByTurnChart, retentionByAgeChart, retentionVsCostChart } from '../src/report/charts.js';
import { reportHtml } from '../src/report/html.js';
import { budgetMarkdown, reportMarkdown } from '../src/report/markdown.js';
import { policyTable, runSummary, simulatedNote } from '../src/report/text.js';
import { reported } from '../src/records/digest.js';
import { policiesCsv, summaryCsv } from '../src/records/csv.js';
import { memoryOf } from '../src/records/memory.js';
import { csvRows } from './_io.js';
import { goldenRun, policiesRun } from './fixtures/report/run.js';
import { notesOf } from './fixtures/report/spec.js';

/** The one line every retention table and chart carries when a policy's memory is simulated. */
const NOTE =
  "Simulated memory (summary-buffer keep 0.9/1, retrieval lexical embedding, facts recall 0.8): retained means the fact's value is in what is sent, an upper bound on what a model would answer";

const subtitle = (chart: { spec: unknown }) => (chart.spec as { title: { subtitle: string[] } }).title.subtitle;
/** What a chart says of itself: above the plot and under it. */
const said = (chart: { spec: unknown }) => [...subtitle(chart), ...notesOf(chart.spec)].join('\n');

describe('reports say what is simulated', async () => {
  // keepRecent=1: summary-buffer folds in these short conversations (by default it keeps them whole, and makes no memory).
  const memory = await policiesRun(['full', 'summary-buffer:keep=0.9,keepRecent=1', 'summary-buffer:keepRecent=1', 'priority', 'retrieval', 'facts:recall=0.8']);
  const plain = await goldenRun();

  it('names each remembering policy with what its retention rests on (keep, recall, the lexical embedding), once each', () => {
    expect(simulatedNote(memory.info)).toBe(NOTE);
    // priority keeps messages verbatim: nothing simulated; windows and full neither.
    expect(simulatedNote(plain.info)).toBeUndefined();
    expect(simulatedNote({})).toBeUndefined();
  });

  it('a policy that is not built in is named when its records show upkeep (its memory is what its module simulates), and not otherwise', () => {
    const info = { policies: [...memory.info.policies, { name: 'mine:keep=2', id: 'mine', params: { keep: 2 } }, { name: 'constructor', id: 'constructor', params: {} }] };
    const records = [
      ...memory.results.policies,
      { policy: 'mine:keep=2', auxTokens: 120 },
      { policy: 'constructor', auxTokens: 0 },
    ];
    expect(simulatedNote(info, records)).toBe(NOTE.replace('facts recall 0.8)', 'facts recall 0.8, mine as its module simulates it)'));
    expect(simulatedNote(info, [...memory.results.policies, { policy: 'mine:keep=2', auxTokens: 0 }])).toBe(NOTE);
    expect(simulatedNote({ policies: info.policies.slice(-2) }, records)).toBe(
      "Simulated memory (mine as its module simulates it): retained means the fact's value is in what is sent, an upper bound on what a model would answer",
    );
    expect(simulatedNote({ ...info, upkeep: { recorded: 'upkeep.cassette.jsonl' } }, records)).toMatch(/^Recorded memory \(summary-buffer, retrieval, facts, mine: a real model’s responses from upkeep\.cassette\.jsonl\)/);
  });

  it('a built-in policy that made no memory in any conversation is not named: it sent the messages themselves (its rows say memory none)', async () => {
    // summary folds above 3,000 tokens by default: these conversations never reach it, so nothing simulated was sent.
    const short = await policiesRun(['full', 'summary', 'facts:recall=0.8']);
    expect(short.results.policies.find((p) => p.policy === 'summary')).toMatchObject({ auxTokens: 0, memory: 'none' });
    const note = "Simulated memory (facts recall 0.8): retained means the fact's value is in what is sent, an upper bound on what a model would answer";
    expect(simulatedNote(short.info, short.results.policies)).toBe(note);
    expect(policyTable(short.results, short.info, { wide: true }).trimEnd().split('\n').at(-1)).toBe(note);
    // Without the rows, the note can only read the policies' parameters.
    expect(simulatedNote(short.info)).toMatch(/^Simulated memory \(summary keep 1, facts recall 0\.8\)/);
    // Nothing simulated at all: no note, and the verdict's retention is plain.
    const none = await policiesRun(['full', 'summary']);
    expect(simulatedNote(none.info, none.results.policies)).toBeUndefined();
    expect(runSummary(none.results, none.info, { wide: true })).not.toMatch(/Simulated memory|simulated retention/);
  });

  it('the run table ends with the line, only when such a policy is in the run', () => {
    // Wrapped at 100 columns, its next lines indented; on one line with --wide.
    const table = policyTable(memory.results, memory.info);
    expect(table.trimEnd().split('\n').at(-2)).toBe(NOTE.slice(0, NOTE.lastIndexOf(' ', 100)));
    expect(table.trimEnd().replace(/\n {2}/g, ' ').split('\n').at(-1)).toBe(NOTE);
    expect(policyTable(memory.results, memory.info, { wide: true }).trimEnd().split('\n').at(-1)).toBe(NOTE);
    expect(policyTable(plain.results, plain.info)).not.toContain('Simulated memory');
    // Called without the policies (as before they were asked for), the table has no line.
    expect(policyTable(memory.results, { models: memory.info.models, priceDate: memory.info.priceDate })).not.toContain('Simulated memory');
  });

  it('report.md and report.html carry it under the budget table (and the per-scenario table)', () => {
    expect(budgetMarkdown(reported(memory.results), memory.info).endsWith(`|\n\n${NOTE}\n`)).toBe(true);
    expect(reportMarkdown(plain.results, plain.info)).not.toContain('Simulated memory');
    const html = reportHtml(memory.results, memory.info, []);
    expect(html.split(`<p class="caption">${NOTE.replace("'", '&#39;')}</p>`).length - 1).toBe(2);
    expect(reportHtml(plain.results, plain.info, [])).not.toContain('Simulated memory');
  });

  it('the retention charts say it under the plot, last; the cost charts, which show no retention, do not', () => {
    // Two lines, so the notes stay about as wide as the chart.
    const lines = ['Simulated memory: summary-buffer keep 0.9/1, retrieval lexical embedding, facts recall 0.8', "Retained means the fact's value is in what is sent, an upper bound on what a model would answer"];
    expect(notesOf(retentionVsCostChart(memory.results, memory.info).spec).slice(-2)).toEqual(lines);
    expect(notesOf(retentionByAgeChart(memory.results, memory.info).spec).slice(-2)).toEqual(lines);
    expect(said(costByTurnChart(memory.results, memory.info))).not.toContain('Simulated memory');
    expect(said(retentionVsCostChart(plain.results, plain.info))).not.toContain('Simulated memory');
  });
});

describe('every output says what it measured', async () => {
  const memory = await policiesRun(['full', 'window-turns:turns=2', 'summary-buffer', 'summary-buffer:keepRecent=1', 'priority', 'retrieval', 'facts', 'pipeline:stages=mask-observations>summary', 'summary:threshold=50']);

  it('memory is none for a policy that keeps no memory made by upkeep, simulated where simulated upkeep made one', () => {
    const byPolicy = Object.fromEntries(memory.results.policies.map((p) => [p.policy, p.memory]));
    expect(byPolicy).toEqual({
      full: 'none',
      'window-turns:turns=2': 'none',
      // These conversations are too short for it to fold (keepRecent 4) or summarize (above 3,000 tokens): it sent the messages themselves.
      'summary-buffer': 'none',
      'summary-buffer:keepRecent=1': 'simulated',
      priority: 'none',
      retrieval: 'simulated',
      facts: 'simulated',
      'pipeline:mask-observations > summary': 'none',
      'summary:threshold=50': 'simulated',
    });
    // Each scenario's row says simulated where upkeep made a memory in that conversation: summary:threshold=50 summarizes kavya-late-order, not noah-amnesia.
    const rows = Object.fromEntries(memory.results.summary.map((s) => [`${s.scenario} ${s.policy}`, s.memory]));
    expect([rows['kavya-late-order summary:threshold=50'], rows['noah-amnesia summary:threshold=50']]).toEqual(['simulated', 'none']);
    for (const s of memory.results.summary) expect(s.memory, `${s.scenario} ${s.policy}`).toBe(s.auxTokens > 0 && !['full', 'window-turns:turns=2', 'priority'].includes(s.policy) ? 'simulated' : 'none');
  });

  it('policies.csv and summary.csv have answered, answer_retention and judged_unsent, empty when answers were not measured, and memory', () => {
    const columns = ['policy', 'model', 'answered', 'answer_retention', 'memory', 'judged_unsent'];
    const policies = csvRows(policiesCsv(memory.results), columns).map((r) => Object.values(r));
    expect(policies[0]).toEqual(['full', 'gpt-4o-mini', '', '', 'none', '']);
    expect(policies[3]).toEqual(['summary-buffer:keepRecent=1', 'gpt-4o-mini', '', '', 'simulated', '']);
    const summary = csvRows(summaryCsv(memory.results), columns);
    expect(summary.map((r) => [r.answered, r.answer_retention, r.judged_unsent].join(''))).toEqual(summary.map(() => ''));
    expect(summary.map((r) => r.memory)).toEqual(memory.results.summary.map((s) => s.memory));
    expect(memory.results.policies.every((p) => p.answered === null && p.answerRetention === null)).toBe(true);
  });

  it('a policy module is told by its records, and recorded upkeep makes a remembering policy recorded where it made a memory', () => {
    expect(memoryOf({ id: 'mine', params: {} }, false, true)).toBe('simulated');
    expect(memoryOf({ id: 'mine', params: {} }, false, false)).toBe('none');
    expect(memoryOf({ id: 'summary', params: { keep: 1 } }, true, true)).toBe('recorded');
    // A conversation in which upkeep made no memory: nothing simulated or recorded was sent.
    expect(memoryOf({ id: 'summary', params: { keep: 1 } }, false, false)).toBe('none');
    expect(memoryOf({ id: 'summary', params: { keep: 1 } }, true, false)).toBe('none');
    expect(memoryOf({ id: 'pipeline', params: { stages: 'summary>window' } }, false, true)).toBe('none');
  });
});
