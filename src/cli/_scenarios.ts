import { resolve } from 'node:path';
import { displayPath } from '../output/display.js';
import type { ScenarioOut } from '../scenario/docs.js';
import { scenarioToYaml } from '../scenario/yaml.js';
import { turnTaker } from '../process.js';
import { writeFilesPausing } from '../output/files.js';
import type { IO } from './_io.js';
import { checkOutputFolder } from './_output.js';

/** Refuses `--out` before any work when it cannot be the output folder (a file on the way, a device). */
export function checkScenarioOut(out: string | undefined): void {
  if (out !== undefined) checkOutputFolder(resolve(out), out, 'the scenario files');
}

/**
 * Writes scenario documents as `generate` and `import` do: one YAML file each
 * into `out` (all-or-nothing), or one YAML stream on stdout without `out`,
 * a document at a time, waiting while stdout's reader is behind. Documents
 * are asked for in order (`docOf(i)`, whose id is `ids[i]`), once each, as
 * they are written: a large set is never held whole, as documents nor as
 * text. The event loop gets a turn between documents, so that Ctrl-C or
 * SIGTERM stops it at once (and a staged `out` is removed).
 */
export async function writeScenarios(ids: readonly string[], docOf: (i: number) => ScenarioOut, header: readonly string[], out: string | undefined, io: IO): Promise<number> {
  if (out === undefined) {
    const turn = turnTaker();
    for (let i = 0; i < ids.length; i++) {
      io.out((i === 0 ? '' : '---\n') + scenarioToYaml(docOf(i), header));
      await (io.outBehind?.() ?? turn());
    }
    return 0;
  }
  const dir = resolve(out);
  await writeFilesPausing(
    dir,
    ids.map((id) => `${id}.yaml`),
    (i) => scenarioToYaml(docOf(i), header),
  );
  io.err(`wrote ${ids.length} scenarios to ${displayPath(dir)}/\n`);
  return 0;
}
