/**
 * The `import` command's flags for the importers' options: one flag per
 * option key, read from the options the importers declare (importOptions),
 * so an option is declared once, in its importer's schema.
 * @module
 */
import type { Options } from 'yargs';
import type { ImportOption } from '../scenario/import/index.js';

/** The flag of an option key: `factValue` → `fact-value`. */
export function flagOf(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * The yargs options of the importers' options, by flag. Each is described
 * as `<formats>: <description>`, one part per description the formats share
 * (the formats in registry order), with the default when they share it.
 * A number is read as given, so that the format's schema refuses text that
 * is not one (`--n: expected number, got "abc"`), not yargs' NaN.
 */
export function importerFlags(options: readonly ImportOption[]): Record<string, Options> {
  return Object.fromEntries(
    options.map((o): [string, Options] => {
      const flag = flagOf(o.key);
      const describe = helpOf(o, flag);
      switch (o.kind) {
        case 'boolean':
          return [flag, { type: 'boolean', describe }];
        case 'strings':
          return [flag, { type: 'string', array: true, describe }];
        case 'number':
          return [flag, { requiresArg: true, coerce: numberFromText, describe }];
        case 'string':
          return [flag, { type: 'string', describe, ...(o.choices && { choices: [...o.choices] }) }];
      }
    }),
  );
}

function numberFromText(raw: unknown): unknown {
  return typeof raw === 'string' && raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
}

/** `<formats>: <description> (<default>)`, one part per description. */
function helpOf(o: ImportOption, flag: string): string {
  const byText = new Map<string, ImportOption['uses']>();
  for (const u of o.uses) byText.set(u.describe, [...(byText.get(u.describe) ?? []), u]);
  return [...byText].map(([text, uses]) => `${uses.map((u) => u.format).join(', ')}: ${text}${notes(o, flag, uses)}`).join('; ');
}

/** What the flag's form and the formats' shared default add: repeatable, default on (with its `--no-` form), the default value. */
function notes(o: ImportOption, flag: string, uses: ImportOption['uses']): string {
  const shared = new Set(uses.map((u) => JSON.stringify(u.default))).size === 1 ? uses[0]!.default : undefined;
  const said: string[] = [];
  if (o.kind === 'strings') said.push('repeatable');
  if (o.kind === 'boolean') {
    if (shared === true) said.push(`default on; --no-${flag}`);
    else if (shared === false) said.push('default off');
  } else if (shared !== undefined) said.push(`default: ${Array.isArray(shared) ? shared.join(', ') : String(shared)}`);
  return said.length ? ` (${said.join('; ')})` : '';
}
