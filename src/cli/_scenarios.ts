import { resolve } from 'node:path';
import { displayPath } from '../study/study.js';
import type { ScenarioOut } from '../scenario/docs.js';
import { scenariosToYamlStream, scenarioToYaml } from '../scenario/yaml.js';
import { writeFilesAtomic } from '../study/files.js';
import type { IO } from './_io.js';
import { checkOutputFolder } from './_output.js';

/** Refuses `--out` before any work when it cannot be the output folder (a file on the way, a device). */
export function checkScenarioOut(out: string | undefined): void {
  if (out !== undefined) checkOutputFolder(resolve(out), out);
}

/**
 * Writes scenario documents as `generate` and `import` do: one YAML file each
 * into `out` (all at once), or one YAML stream on stdout without `out`.
 */
export function writeScenarios(docs: readonly ScenarioOut[], header: readonly string[], out: string | undefined, io: IO): number {
  if (out === undefined) {
    io.out(scenariosToYamlStream(docs, header));
    return 0;
  }
  const dir = resolve(out);
  writeFilesAtomic(dir, new Map(docs.map((d) => [`${d.id}.yaml`, scenarioToYaml(d, header)])));
  io.err(`wrote ${docs.length} scenarios to ${displayPath(dir)}/\n`);
  return 0;
}
