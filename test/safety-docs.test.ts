import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runStudy } from '../src/engine/run.js';
import { usd } from '../src/records/format.js';
import { violationsCsv } from '../src/records/csv.js';
import { loadScenarios, loadStudy, policiesFromFlags } from '../src/study/study.js';
import { shipped } from './_policies.js';
import { ROOT } from './_shared.js';

/**
 * The tables of docs/safety.md (what memory must not keep or break) are
 * what ctxsim prints: rerun, compare. When violations.csv changes on purpose
 * (a column added), `CTXSIM_UPDATE_DOCS=1 npx vitest run test/safety-docs.test.ts`
 * rewrites its block in the page.
 */

const PAGE = join(ROOT, 'docs', 'safety.md');
const doc = readFileSync(PAGE, 'utf8');
const UPDATE = !!process.env.CTXSIM_UPDATE_DOCS && process.env.CTXSIM_UPDATE_DOCS !== '0';

describe('docs/safety.md: what memory must not keep or break', () => {
  it('its safety table is the summary of test/fixtures/safety/study.yaml', async () => {
    const study = await loadStudy(join(ROOT, 'test/fixtures/safety/study.yaml'));
    const r = runStudy({ ...study, conversations: loadScenarios(study.scenarios) });
    const rows = r.summary.map((s) =>
      [s.policy, s.zombies.join(';') || '—', s.zombiePromptTurns, s.zombieProbes, s.injectionExposureTurns, `${s.retained}/${s.probes}`, usd(s.totalCost), s.storedBytes].join(' | '),
    );
    const table = doc.split('\n').filter((l) => /^\| (full|summary|retrieval|facts)/.test(l)).map((l) => l.slice(2, -2));
    expect(table).toEqual(rows);
  });

  it('its violations.csv is what the naive window gives on the voice assistant', () => {
    const r = runStudy({
      conversations: [shipped('voice-assistant-tasks.yaml')],
      policies: policiesFromFlags(['window-turns:turns=2', 'window-turns:turns=2,naive=true']),
      seed: 42,
      models: ['gpt-4o-mini'],
      tokenizer: 'chars4',
    });
    const block = `\`\`\`\n${violationsCsv(r)}\`\`\``;
    if (UPDATE) writeFileSync(PAGE, doc.replace(/```\nscenario,policy,turn,rule,[^`]*```/, block));
    else expect(doc).toContain(block);
  });
});
