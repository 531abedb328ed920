import { assemble, type ColumnSpec, type RecordKind, type RecordOf } from '../src/records/columns.js';
import {
  POLICY_RECORD,
  PROBE_RECORD,
  SUMMARY_RECORD,
  TURN_RECORD,
  type PolicyRecord,
  type ProbeRecord,
  type SummaryRecord,
  type TurnRecord,
} from '../src/records/registry.js';

/**
 * Records for tests, built from the registries: every column at the zero of
 * its kind but the fields a test gives, so that a column added to a kind
 * (ARCHITECTURE.md, "How to add a column") is in every fixture already.
 */

/** A column's zero: 0 (count, number, ratio, duration), 0n (money), false, '', [] — the first of its `values` when it has a fixed set; null when nullable (no figure: a retention without probes, answers not measured); undefined (left out) when optional. */
export function zeroOf(c: ColumnSpec): unknown {
  if (c.optional) return undefined;
  if (c.nullable) return null;
  switch (c.kind) {
    case 'money':
      return 0n;
    case 'flag':
      return false;
    case 'text':
      return c.values?.[0] ?? '';
    case 'list':
      return [];
    default:
      return 0;
  }
}

/** A record of `kind`, its fields in registry order: every column at its zero (`zeroOf`) but the `fields` given. */
export function recordOf<Cs extends readonly ColumnSpec[]>(kind: RecordKind<Cs>, fields: Partial<RecordOf<Cs>> = {}): RecordOf<Cs> {
  const zeros = Object.fromEntries(kind.columns.map((c) => [c.key, zeroOf(c)]));
  return assemble(kind, { ...zeros, ...fields } as RecordOf<Cs>);
}

/** A record of each kind (a violation's: `recordOf(VIOLATION_RECORD, …)`). */
export const turnRecord = (fields: Partial<TurnRecord> = {}): TurnRecord => recordOf(TURN_RECORD, fields);
export const probeRecord = (fields: Partial<ProbeRecord> = {}): ProbeRecord => recordOf(PROBE_RECORD, fields);
export const summaryRecord = (fields: Partial<SummaryRecord> = {}): SummaryRecord => recordOf(SUMMARY_RECORD, fields);
export const policyRecord = (fields: Partial<PolicyRecord> = {}): PolicyRecord => recordOf(POLICY_RECORD, fields);
