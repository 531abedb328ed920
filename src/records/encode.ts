import type { ColumnSpec, RecordKind, RecordOf } from './columns.js';
import { csvRow } from './csv.js';
import { jsonRow, STREAMED_LISTS, type StreamedList } from './json.js';
import { PROBE_RECORD, TURN_RECORD, VIOLATION_RECORD, type Results } from './registry.js';

/** The records one batch (a scenario, or any run of them) adds to the record files. */
export type RecordBatch = Pick<Results, StreamedList>;

/**
 * A batch's part of the record files as UTF-8 bytes, per streamed list: its
 * rows of the CSV file (no header) and its lines of the results.json list
 * (no `,\n` before the first). Each is a view of its own ArrayBuffer, so a
 * worker thread can hand it over without a copy.
 */
export type RecordText = Record<StreamedList, { csv: Uint8Array; json: Uint8Array }>;

/**
 * A batch's rows in the record files, as the files hold them: of the lists
 * in `lists` (default: all); any other list's text is empty, its rows not
 * encoded (a `--records summary` run writes no turn or probe rows).
 */
export function recordText(batch: RecordBatch, lists: readonly StreamedList[] = STREAMED_LISTS): RecordText {
  return {
    turns: lists.includes('turns') ? text(TURN_RECORD, batch.turns) : none(),
    probes: lists.includes('probes') ? text(PROBE_RECORD, batch.probes) : none(),
    violations: lists.includes('violations') ? text(VIOLATION_RECORD, batch.violations) : none(),
  };
}

/** A list's text when it is not written: empty, each part its own (empty) ArrayBuffer. */
function none(): { csv: Uint8Array; json: Uint8Array } {
  return { csv: new Uint8Array(0), json: new Uint8Array(0) };
}

/** The ArrayBuffers of a batch's text (to transfer it to another thread). */
export function textBuffers(text: RecordText): ArrayBuffer[] {
  return STREAMED_LISTS.flatMap((list) => [text[list].csv.buffer as ArrayBuffer, text[list].json.buffer as ArrayBuffer]);
}

function text<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, rows: readonly RecordOf<Cs>[]): { csv: Uint8Array; json: Uint8Array } {
  const csv = new Utf8Writer();
  const json = new Utf8Writer();
  for (let i = 0; i < rows.length; i++) {
    csv.write(csvRow(kind.csv, rows[i]!));
    json.write(jsonRow(kind, rows[i]!, i === 0));
  }
  return { csv: csv.bytes(), json: json.bytes() };
}

/**
 * Strings encoded as they come into a buffer that doubles when full: a
 * batch's rows are not joined into one large string first (flattening and
 * encoding that costs more than the rows themselves).
 */
class Utf8Writer {
  private buffer = Buffer.allocUnsafeSlow(1 << 16);
  private at = 0;

  write(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const need = this.at + 3 * s.length;
    if (need > this.buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(need, 2 * this.buffer.length));
      this.buffer.copy(grown, 0, 0, this.at);
      this.buffer = grown;
    }
    this.at += this.buffer.write(s, this.at);
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.buffer.buffer, 0, this.at);
  }
}
