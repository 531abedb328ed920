import { resolve } from 'node:path';
import { checkUpkeep, upkeepCheckReport, type ObservationForm } from '../study/check-upkeep.js';
import { displayPath } from '../output/display.js';
import type { IO } from './_io.js';

export interface CheckUpkeepFlags {
  file: string;
  format: string;
  json?: boolean;
  observations?: ObservationForm;
}

/** `ctxsim check-upkeep`: the check of the simulated upkeep against a dataset's real memories, as a table or JSON on stdout. */
export function checkUpkeepCmd(flags: CheckUpkeepFlags, io: IO): number {
  const path = resolve(flags.file);
  const check = checkUpkeep({ path, file: displayPath(path) }, { format: flags.format, ...(flags.observations && { observations: flags.observations }) });
  io.out(flags.json ? `${JSON.stringify(check, null, 2)}\n` : upkeepCheckReport(check));
  return 0;
}
