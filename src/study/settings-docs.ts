import { docsCell, DOCS_COMMAND } from '../text/markdown.js';
import { keysOf, SETTINGS, type Setting } from './settings.js';

/** The first line of the generated block, and its last: docs/studies.md keeps its own text around them. */
export const SETTINGS_TABLE_START = `<!-- Generated from the settings' specs by scripts/gen-docs.mjs (${DOCS_COMMAND}); do not edit. -->`;
export const SETTINGS_TABLE_END = '<!-- End of the generated settings table. -->';

/** What each kind of setting is, in the table's words. */
const KIND: Readonly<Record<Setting['of'], string>> = { run: 'run', report: 'report', study: 'study', command: 'command line' };

/**
 * Every setting a study or a command takes, one row each in `SETTINGS`
 * order (the settings inside one after it): its study key, its flag, its kind, whether it decides records (so
 * keys the replay cache and is repeated by `ctxsim check`'s accept
 * command), and what it means. The block between the markers of
 * docs/studies.md.
 */
export function settingsTable(): string {
  // The settings inside one (the gate's) follow it, each at its key inside it: `gate.baseline`.
  const rows = SETTINGS.flatMap((s) => [s, ...(s.fields ?? [])]).filter((s) => s.key !== undefined || s.meta.flag).map((s) => {
    const keys = s.key === undefined ? '—' : keysOf({ key: s.key, meta: s.meta }).map((k) => `\`${s.within === undefined ? '' : `${s.within}.`}${k}\``).join(', ');
    const flag = s.meta.flag ? `\`--${s.meta.flag.name}\`` : '—';
    const what = s.meta.about ?? s.meta.flag?.describe ?? String(s.declared.description);
    return `| ${keys} | ${flag} | ${KIND[s.of]} | ${s.decidesRecords ? 'yes' : ''} | ${docsCell(what)} |`;
  });
  return [SETTINGS_TABLE_START, '', '| key | flag | kind | decides records | what |', '|---|---|---|---|---|', ...rows, '', SETTINGS_TABLE_END].join('\n');
}

/** `page` with its generated settings table made anew (the text between the markers replaced). */
export function withSettingsTable(page: string): string {
  const start = page.indexOf(SETTINGS_TABLE_START);
  const end = page.indexOf(SETTINGS_TABLE_END);
  if (start < 0 || end < start) throw new Error('docs/studies.md: the settings table’s markers are missing');
  return page.slice(0, start) + settingsTable() + page.slice(end + SETTINGS_TABLE_END.length);
}
