import type { z } from 'zod';
import { POLICIES } from './index.js';
import { COMMON_PARAMS, defaultOf, paramMeta, policyParams } from './params.js';
import type { Policy } from './types.js';
import { docsCell, DOCS_COMMAND } from '../text/markdown.js';

/**
 * docs/policy-parameters.md: one table per policy (parameter, kind, default,
 * bounds or choices, description), then the common parameters; all read from
 * the policies' parameter schemas.
 */
export function policyParametersMarkdown(policies: readonly Policy[] = POLICIES): string {
  const out = [
    `<!-- Generated from the policies' parameter schemas by scripts/gen-docs.mjs (${DOCS_COMMAND}); do not edit. -->`,
    '',
    '# Policy parameters',
    '',
    'Every memory policy, and the parameters it takes. Give them in a study file, where a list makes a sweep',
    '(`window-tokens: {budget: [1000, 2000]}`), or on the command line, lists separated by `|`',
    '(`--policy window-tokens:budget=1000|2000`). A parameter left out takes its default.',
    '',
  ];
  for (const p of policies) {
    const shape = policyParams(p).shape;
    out.push(`## \`${p.id}\``, '', `${p.describe.charAt(0).toUpperCase()}${p.describe.slice(1)}.`, '');
    out.push(...(Object.keys(shape).length ? table(shape) : ['No parameters of its own.']), '');
  }
  out.push('## Common parameters', '', 'Every policy also takes these.', '', ...table(COMMON_PARAMS.shape), '');
  return out.join('\n');
}

function table(shape: Readonly<Record<string, z.ZodType>>): string[] {
  const rows = Object.entries(shape).map(([name, schema]) => {
    const meta = paramMeta(schema);
    const def = defaultOf(schema);
    const bounds = meta.choices
      ? meta.choices.map((c) => `\`${c}\``).join(', ')
      : meta.kind === 'probability'
        ? '0 to 1'
        : meta.kind === 'duration'
          ? '`30s`, `5m`, `24h`, `7d`, or seconds'
          : meta.min !== undefined
            ? `≥ ${meta.min}`
            : '—';
    const shown = def === undefined ? '—' : typeof def === 'string' ? `\`${def}\`` : String(def);
    return [`\`${name}\``, meta.kind, shown, bounds, meta.describe ?? ''].map(docsCell);
  });
  return ['| parameter | kind | default | bounds | description |', '|---|---|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)];
}


/**
 * One line per policy for `--help`: its id and its own parameters with their
 * defaults (`window-turns (turns=10, naive=false)`), read from its schema.
 */
export function policyHelpLines(policies: readonly Policy[] = POLICIES): string[] {
  return policies.map((p) => {
    const params = Object.entries(policyParams(p).shape).map(([name, schema]) => {
      const def = defaultOf(schema);
      return def === undefined ? name : `${name}=${def}`;
    });
    return params.length ? `${p.id} (${params.join(', ')})` : p.id;
  });
}
