import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STUDY_FILE_KEYS } from '../src/study/scenario-file.js';
import { SETTINGS } from '../src/study/settings.js';
import { settingsTable, SETTINGS_TABLE_END, SETTINGS_TABLE_START, withSettingsTable } from '../src/study/settings-docs.js';
import { DOCS_COMMAND } from '../src/text/markdown.js';
import { ROOT } from './_shared.js';

describe('docs/studies.md: the table of every study key and flag', () => {
  const page = readFileSync(join(ROOT, 'docs/studies.md'), 'utf8');

  it(`is what the settings' specs give now (regenerate with ${DOCS_COMMAND})`, () => {
    expect(page.indexOf(SETTINGS_TABLE_START)).toBeGreaterThan(0);
    expect(page.indexOf(SETTINGS_TABLE_END)).toBeGreaterThan(page.indexOf(SETTINGS_TABLE_START));
    expect(withSettingsTable(page)).toBe(page);
  });

  it('has a row for every setting with a study key or a flag, saying its kind and whether it decides records', () => {
    const rows = settingsTable().split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| key '));
    // The settings inside one (the gate's, the upkeep's) have rows of their own, after it, at their key inside it.
    expect(rows).toHaveLength(SETTINGS.flatMap((s) => [s, ...(s.fields ?? [])]).filter((s) => s.key !== undefined || s.meta.flag).length);
    expect(rows.find((r) => r.startsWith('| `gate.maxCostIncrease` '))).toMatch(/^\| `gate\.maxCostIncrease` \| `--max-cost-increase` \| study \| {2}\| the cost rise /);
    expect(rows).toContain('| `seed` | `--seed` | run | yes | seed of every random stream (default 42) |');
    expect(rows.find((r) => r.startsWith('| `minRetention` '))).toMatch(/^\| `minRetention` \| `--min-retention` \| report \| {2}\| the share of the probed facts/);
    expect(rows.find((r) => r.includes('`--jobs`'))).toBe('| — | `--jobs` | command line |  | worker threads (output is the same for any number) |');
    // An upkeep key with its flag: one row, at its key inside upkeep:; one without, its row too.
    expect(rows.find((r) => r.includes('`--cassette`'))).toMatch(/^\| `upkeep\.cassette` \| `--cassette` \| study \| yes \| the cassette file, relative to the study file/);
    expect(rows).toContain('| `upkeep.concurrency` | — | study |  | requests in flight at once while recording (default 4) |');
  });
});

describe('docs/studies.md: the overview of the study keys', () => {
  const page = readFileSync(join(ROOT, 'docs/studies.md'), 'utf8');

  it('names every key of a study file once and nothing else, so it cannot fall behind the spec', () => {
    const start = page.indexOf('| key | default | meaning | read more |');
    expect(start).toBeGreaterThan(0);
    const rows = page.slice(start).split('\n').slice(2);
    const named = rows.slice(0, rows.findIndex((l) => !l.startsWith('| '))).flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
    expect([...named].sort()).toEqual([...STUDY_FILE_KEYS].sort());
  });
});
