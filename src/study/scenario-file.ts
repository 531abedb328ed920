import { scenarioFromFile, scenarioFromText, scenarioOrStudyFromFile, scenarioPlacedFromFile } from '../scenario/load.js';
import type { Problem } from '../errors.js';
import type { Conversation } from '../types.js';
import { keysOf, WRITTEN_SETTINGS } from './settings.js';

/**
 * A scenario file read where a study file may be handed instead. The
 * scenario loader (scenario/load.ts) is below the settings' specs: it is
 * given the study file's keys, which follow from the specs, so a setting
 * that gets a study key tells a study file from a scenario with nothing
 * else to write.
 */

/** Every key of a study file (each setting's study key, and its `one` key): a mapping with no turns and one of them is a study file. */
export const STUDY_FILE_KEYS: ReadonlySet<string> = new Set(WRITTEN_SETTINGS.flatMap(keysOf));

/** Reads a scenario file (YAML or JSON); throws a ScenarioError listing every problem (a study file handed instead says so). */
export function loadScenarioFile(file: string, displayName = file): Conversation {
  return scenarioFromFile(file, displayName, STUDY_FILE_KEYS);
}

/** `loadScenarioFile`, with the place of the scenario's id (for errors about the id, such as a duplicate). */
export function loadScenarioPlaced(file: string, displayName = file): { conversation: Conversation; idAt: Problem } {
  return scenarioPlacedFromFile(file, displayName, STUDY_FILE_KEYS);
}

/** Parses scenario text (YAML or JSON); `file` names it in errors (a study file's text says so). */
export function parseScenario(file: string, text: string): Conversation {
  return scenarioFromText(file, text, STUDY_FILE_KEYS);
}

/** Reads a file that may hold a scenario or a study: the scenario, or `study` when it is a study file (a mapping with no turns and a key only a study has). */
export function loadScenarioOrStudy(file: string, displayName = file): Conversation | 'study' {
  return scenarioOrStudyFromFile(file, displayName, STUDY_FILE_KEYS);
}
