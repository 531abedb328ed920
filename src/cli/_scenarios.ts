import { resolve } from 'node:path';
import { displayPath } from '../output/display.js';
import type { ScenarioOut } from '../scenario/docs.js';
import { scenariosToYamlStream, scenarioToYaml } from '../scenario/yaml.js';
import { writeFilesPausing } from '../output/files.js';
import type { IO } from './_io.js';
import { checkOutputFolder } from './_output.js';

/** Refuses `--out` before any work when it cannot be the output folder (a file on the way, a device). */
export function checkScenarioOut(out: string | undefined): void {
  if (out !== undefined) checkOutputFolder(resolve(out), out, 'the scenario files');
}

/**
 * Writes scenario documents as `generate` and `import` do: one YAML file each
 * into `out` (all-or-nothing, giving the event loop a turn between files so
 * that Ctrl-C or SIGTERM stops it at once), or one YAML stream on stdout
 * without `out`.
 */
export async function writeScenarios(docs: readonly ScenarioOut[], header: readonly string[], out: string | undefined, io: IO): Promise<number> {
  if (out === undefined) {
    io.out(scenariosToYamlStream(docs, header));
    return 0;
  }
  const dir = resolve(out);
  await writeFilesPausing(
    dir,
    docs.map((d) => `${d.id}.yaml`),
    (i) => scenarioToYaml(docs[i]!, header),
  );
  io.err(`wrote ${docs.length} scenarios to ${displayPath(dir)}/\n`);
  return 0;
}
