import { Document, isMap, isSeq, visit } from 'yaml';
import type { ScenarioOut, TurnOut } from './docs.js';
import { SCHEMA_BASE_URL } from './schema.js';

/**
 * The first line of every scenario file ctxsim writes: editors with YAML
 * language support (the yaml-language-server modeline) then check and
 * complete the file against the scenario JSON Schema. The schema is named
 * by its unpkg URL, not by a path: a file written by `ctxsim generate` or
 * `ctxsim import` may land anywhere, where no relative path to the
 * installed package is known, and the URL needs no install at all. It names
 * no version, so the text written does not change from one release to the
 * next; while scenario keys are only added, a file an older version wrote
 * still checks against the newest schema.
 */
export const SCENARIO_MODELINE = `# yaml-language-server: $schema=${SCHEMA_BASE_URL}scenario.schema.json`;

/** Keys written in flow style (`{name: Kavya}`), as hand-written scenarios do. */
const FLOW_KEYS = new Set(['facts', 'probe', 'args', 'result', 'forget', 'usage', 'billed']);

/**
 * Serializes a scenario document to YAML that loads back to the same
 * conversation: the schema modeline first, then the `header` lines, as
 * leading comments.
 */
export function scenarioToYaml(doc: ScenarioOut, header: readonly string[] = []): string {
  const d = new Document({ ...doc, turns: doc.turns.map((t) => ('forget' in t ? t : ordered(t))) });
  visit(d, {
    Pair(_, pair) {
      const key = (pair.key as { value?: unknown } | null)?.value;
      if (typeof key === 'string' && FLOW_KEYS.has(key) && (isMap(pair.value) || isSeq(pair.value))) pair.value.flow = true;
    },
  });
  d.commentBefore = [SCENARIO_MODELINE.slice(1), ...header.map((l) => ` ${l}`)].join('\n');
  return d.toString({ lineWidth: 0, minContentWidth: 0 });
}

/** Several scenarios as one multi-document YAML stream (`---` between documents). */
export function scenariosToYamlStream(docs: readonly ScenarioOut[], header: readonly string[] = []): string {
  return docs.map((doc, i) => (i === 0 ? '' : '---\n') + scenarioToYaml(doc, header)).join('');
}

/** A turn's keys in reading order, whatever order they were set in. */
function ordered(t: TurnOut): TurnOut {
  const { user, gap, facts, probe, tools, assistant, usage, injection, names } = t;
  return {
    user,
    ...(gap !== undefined && { gap }),
    ...(facts !== undefined && { facts }),
    ...(probe !== undefined && { probe }),
    ...(tools !== undefined && { tools }),
    ...(assistant !== undefined && { assistant }),
    ...(usage !== undefined && { usage }),
    ...(injection !== undefined && { injection }),
    ...(names !== undefined && { names }),
  };
}
