import { describe, expect, it } from 'vitest';
import { costByTurnChart, retentionByAgeChart, retentionVsCostChart } from '../src/report/charts.js';
import { reportHtml } from '../src/report/html.js';
import { budgetMarkdown, reportMarkdown } from '../src/report/markdown.js';
import { policyTable, simulatedNote } from '../src/report/text.js';
import { reported } from '../src/records/digest.js';
import { goldenRun, policiesRun } from './fixtures/report/run.js';

/** The one line every retention table and chart carries when a policy's memory is simulated. */
const NOTE =
  "Simulated memory (summary-buffer keep 0.9/1, retrieval lexical embedding, facts recall 0.8): retained means the fact's value is in what is sent, an upper bound on what a model would answer";

const subtitle = (chart: { spec: unknown }) => (chart.spec as { title: { subtitle: string[] } }).title.subtitle;

describe('reports say what is simulated', async () => {
  const memory = await policiesRun(['full', 'summary-buffer:keep=0.9', 'summary-buffer', 'priority', 'retrieval', 'facts:recall=0.8']);
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
      { policy: 'mine:keep=2', auxTokens: 120 },
      { policy: 'constructor', auxTokens: 0 },
    ];
    expect(simulatedNote(info, records)).toBe(NOTE.replace('facts recall 0.8)', 'facts recall 0.8, mine as its module simulates it)'));
    expect(simulatedNote(info, [{ policy: 'mine:keep=2', auxTokens: 0 }])).toBe(NOTE);
    expect(simulatedNote({ policies: info.policies.slice(-2) }, records)).toBe(
      "Simulated memory (mine as its module simulates it): retained means the fact's value is in what is sent, an upper bound on what a model would answer",
    );
    expect(simulatedNote({ ...info, upkeep: { recorded: 'upkeep.cassette.jsonl' } }, records)).toMatch(/^Recorded memory \(summary-buffer, retrieval, facts, mine: a real model’s responses from upkeep\.cassette\.jsonl\)/);
  });

  it('the run table ends with the line, only when such a policy is in the run', () => {
    const table = policyTable(memory.results, memory.info);
    expect(table.trimEnd().split('\n').at(-1)).toBe(NOTE);
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

  it('the retention charts say it in their subtitle; the cost charts, which show no retention, do not', () => {
    // Two lines, so the subtitle stays about as wide as the chart.
    const lines = ['Simulated memory: summary-buffer keep 0.9/1, retrieval lexical embedding, facts recall 0.8', "Retained means the fact's value is in what is sent, an upper bound on what a model would answer"];
    expect(subtitle(retentionVsCostChart(memory.results, memory.info)).slice(-3, -1)).toEqual(lines);
    expect(subtitle(retentionByAgeChart(memory.results, memory.info)).slice(-3, -1)).toEqual(lines);
    expect(subtitle(costByTurnChart(memory.results, memory.info)).join('\n')).not.toContain('Simulated memory');
    expect(subtitle(retentionVsCostChart(plain.results, plain.info)).join('\n')).not.toContain('Simulated memory');
  });
});
