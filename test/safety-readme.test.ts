import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runStudy } from '../src/engine/run.js';
import { usd } from '../src/records/format.js';
import { violationsCsv } from '../src/records/csv.js';
import { loadScenarios, loadStudy, policiesFromFlags } from '../src/study/study.js';
import { shipped } from './_policies.js';
import { ROOT } from './_shared.js';

/** The tables of the README's safety section are what ctxsim prints: rerun, compare. */

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const start = readme.indexOf('## What memory must not keep or break');
const doc = readme.slice(start, readme.indexOf('\n## ', start + 1));

describe('README: what memory must not keep or break', () => {
  it('its safety table is the summary of test/fixtures/safety/study.yaml', () => {
    const study = loadStudy(join(ROOT, 'test/fixtures/safety/study.yaml'));
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
      model: 'gpt-4o-mini',
      tokenizer: 'chars4',
    });
    expect(doc).toContain(`\`\`\`\n${violationsCsv(r)}\`\`\``);
  });
});
