import { existsSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import type { Problem } from '../errors.js';
import type { Change } from '../gate/compare.js';
import { isPolicyPath } from '../policies/module.js';
import { readInputText } from '../process.js';
import type { Place, Placer } from '../report/gate.js';
import { SourceDoc, valueAt, type DocPath } from '../text/document.js';
import { keysOf, WRITTEN_SETTINGS } from './settings.js';
import type { Study } from './study.js';

/**
 * Where the gate points each change it blames (a GitHub annotation's file
 * and line): a changed scenario at its file's `id:` line (a generated or
 * imported one at its study entry); a re-parameterized policy at its entry
 * in the study's `policies`; a policy module whose file changed at that
 * file; a changed model or setting at its key in the study file (a price
 * table's change at the study model's entry in the price file named).
 */

/** The run settings each field of a baseline's fingerprint tells, by name (`settings` entries are named by their setting). */
const FIELD_SETTINGS: Readonly<Record<string, readonly string[]>> = {
  tokenizer: ['tokenizer'],
  prices: ['prices'],
  cache: ['promptCache', 'promptCacheTtl', 'cacheBreakpoint'],
  rules: ['messageRules'],
  seed: ['seed'],
  toolDefs: ['toolDefs'],
  models: ['models'],
};

/** How a place's file is written: relative to `root` when below it (with `/`), else absolute. */
export function placeFile(file: string, root = process.cwd()): string {
  const abs = resolve(file);
  const rel = relative(root, abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : abs;
}

/** The study file, parsed to tell where its keys are; undefined for the built-in study or a file that no longer reads. */
function studyDoc(study: Study): SourceDoc | undefined {
  if (!study.file) return undefined;
  try {
    return SourceDoc.parse(study.file, readInputText(study.file, { shown: study.file }));
  } catch {
    return undefined;
  }
}

/** A policy entry's policy id: a spec's up to its first `:`, a mapping's one key's. */
function entryId(entry: unknown): string | undefined {
  const spec = typeof entry === 'string' ? entry : entry && typeof entry === 'object' && !Array.isArray(entry) && Object.keys(entry).length === 1 ? Object.keys(entry)[0]! : undefined;
  return spec?.split(':')[0];
}

/** The line of the first line of `text` that names `model` as a JSON key, from 1 (anywhere on it: a table written on one line names it on line 1). */
function modelLine(file: string, model: string): number | undefined {
  try {
    const lines = readInputText(file, { shown: file }).split('\n');
    const key = JSON.stringify(model);
    const named = (l: string) => {
      for (let at = l.indexOf(key); at >= 0; at = l.indexOf(key, at + 1)) if (/^\s*:/.test(l.slice(at + key.length))) return true;
      return false;
    };
    const i = lines.findIndex(named);
    return i < 0 ? undefined : i + 1;
  } catch {
    return undefined;
  }
}

/**
 * The places of a study's changes. `scenarios` is where each conversation
 * is written (the pipeline's `scenarioPlaces`); files are written relative
 * to `root` (default: the working folder; for GitHub, the workspace) when
 * below it. A change with nothing to point at (a setting of the built-in
 * study) has no place.
 */
export function changePlaces(study: Study, scenarios: ReadonlyMap<string, Problem>, root = process.cwd()): Placer {
  const shown = (f: string) => placeFile(f, root);
  const doc = studyDoc(study);
  const file = study.file && shown(study.file);
  const at = (path: DocPath): Place | undefined => {
    if (!doc || !file) return undefined;
    if (!path.length) return { file };
    return valueAt(doc.value, path) === undefined ? { file } : { file, line: doc.problem(path, '', path.length === 1).line! };
  };
  /** The policy id an entry's name stands for: a module's path (`./policies/keep-edges.mjs`) names the id of the policy it exports. */
  const policyOf = (name: string | undefined): string | undefined => {
    if (name === undefined || !study.file || !isPolicyPath(name)) return name;
    const path = resolve(dirname(study.file), name);
    return study.policies.find((v) => v.module && resolve(v.module.file) === path)?.policy.id ?? name;
  };
  /** The first of the setting's study keys the file has, or the file. */
  const settingAt = (names: readonly string[]): Place | undefined => {
    const keys = WRITTEN_SETTINGS.filter((s) => names.includes(s.name)).flatMap(keysOf);
    for (const key of keys) if (doc && valueAt(doc.value, [key]) !== undefined) return at([key]);
    return at([]);
  };
  return (change: Change): Place | undefined => {
    switch (change.kind) {
      case 'scenario': {
        const p = scenarios.get(change.scenario);
        if (!p || !existsSync(resolve(p.file))) return at(['scenarios']);
        return { file: shown(p.file), ...(p.line !== undefined && { line: p.line }) };
      }
      case 'policy': {
        const entries = doc && valueAt(doc.value, ['policies']);
        const i = Array.isArray(entries) ? entries.findIndex((e) => policyOf(entryId(e)) === change.after.split(':')[0]) : -1;
        return at(i < 0 ? ['policies'] : ['policies', i]);
      }
      case 'module': {
        const v = study.policies.find((p) => p.policy.id === change.policy && p.module);
        return v?.module ? { file: shown(v.module.file) } : at(['policies']);
      }
      case 'model':
        return settingAt(FIELD_SETTINGS.models!);
      case 'setting': {
        if (change.key === 'prices' && study.prices !== 'builtin') {
          const line = modelLine(study.prices, study.models[0]!);
          return { file: shown(study.prices), ...(line !== undefined && { line }) };
        }
        if (change.key === 'upkeep') return at(doc && valueAt(doc.value, ['upkeep']) !== undefined ? ['upkeep'] : []);
        return settingAt(FIELD_SETTINGS[change.key] ?? [change.key]);
      }
    }
  };
}
