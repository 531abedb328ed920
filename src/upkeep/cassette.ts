import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ScenarioError, type Problem } from '../errors.js';
import { formatPath, issueText, show, valueAt } from '../text/document.js';
import { jsonSyntaxReason } from '../text/json.js';
import { decodeVector, type UpkeepRequest } from './request.js';

/** Tokens an endpoint billed for a request, from its response's `usage`; `input` includes `cached` and `written`. */
export interface BilledUsage {
  input: number;
  /** Input tokens read from the provider's prompt cache (billed at its cache-read price); absent when none. */
  cached?: number;
  /** Input tokens written to the provider's prompt cache (billed at its cache-write price); absent when none. */
  written?: number;
  output: number;
}

/** A recorded response: the request's key, what it was, and the text or vector it answered with. */
export interface CassetteEntry {
  key: string;
  kind: UpkeepRequest['kind'];
  model: string;
  /** A chat completion's text (with an answer's tool calls, one `name(arguments)` a line after it). */
  text?: string;
  /** An embedding: float32 values, little-endian, base64. */
  vector?: string;
  usage: BilledUsage;
}

/**
 * The most tokens a recorded response may say it was billed, input or output:
 * far above any real request, so a count past it is an endpoint's fault (and
 * sums of counts stay exact).
 */
export const MAX_USAGE_TOKENS = 1_000_000_000;

/**
 * The longest line a cassette or a journal may have, in bytes (64 MiB):
 * more than any response a recording writes (an answer's body is at most
 * 50 MB, `maxResponseBytes`'s highest, and its text takes no more as a
 * line). A longer line is refused as soon as that much of it is read, before
 * it is made a string: a file of one line of gigabytes costs a chunk of
 * memory, not the line.
 */
export const MAX_CASSETTE_LINE_BYTES = 64 * 1024 * 1024;

/** The bound on the lines of cassette (or journal) `file`: a longer line is an input error at its line. */
export function cassetteLineLimit(file: string, bytes = MAX_CASSETTE_LINE_BYTES): { bytes: number; exceeded: (line: number) => Error } {
  return {
    bytes,
    exceeded: (line) => new ScenarioError([{ file, line, path: '', message: `a line longer than ${bytes} bytes${bytes === MAX_CASSETTE_LINE_BYTES ? ' (64 MiB)' : ''}, more than any response a recording writes` }]),
  };
}

/** A token count: a whole number from 0 to MAX_USAGE_TOKENS (the bounds first, so 1e308 is told as too big). */
const tokens = z.number().min(0).max(MAX_USAGE_TOKENS).int();
const usage = z
  .strictObject({ input: tokens, cached: tokens.optional(), written: tokens.optional(), output: tokens })
  .refine((u) => (u.cached ?? 0) + (u.written ?? 0) <= u.input, { message: 'cached and written tokens are part of the input tokens: together at most input', path: ['cached'] });
const key = z.string().regex(/^[0-9a-f]{32}$/, 'expected 32 hex digits');
const vector = z
  .string()
  .refine(isFloat32Base64, { message: 'expected base64 of float32 values', abort: true })
  .superRefine((text, ctx) => {
    const bad = decodeVector(text).findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) ctx.addIssue({ code: 'custom', path: [bad], message: `${decodeVector(text)[bad]} as float32: every value must be a finite number` });
  });
/** A recorded response's fields; `usage` optional for an endpoint's answer that reports none (the recording counts it then). */
const entrySchema = (u: z.ZodType<BilledUsage | undefined>) =>
  z.discriminatedUnion('kind', [
    z.strictObject({ key, kind: z.enum(['summary', 'extract', 'answer', 'judge']), model: z.string().min(1), text: z.string(), usage: u }),
    z.strictObject({ key, kind: z.literal('embed'), model: z.string().min(1), vector, usage: u }),
  ]);
const ENTRY = entrySchema(usage);
const ANSWER = entrySchema(usage.optional());

/** What is wrong with a response, at its field (`['usage', 'input']`, `['vector', 3]`), and the value found there when the path reaches one. */
export interface EntryIssue {
  path: (string | number)[];
  message: string;
  got?: unknown;
}

/**
 * The rules every recorded response meets, wherever it comes from — a
 * cassette's line, a journal's, an endpoint's answer (`usage` may then be
 * absent): a known kind, a 32-hex key, a model, a text or a vector of finite
 * float32 values, and whole token counts from 0 to MAX_USAGE_TOKENS. A
 * vector's length is checked against its model's others by the cassette it
 * joins (`Cassette.dimensionIssue`).
 */
export function checkEntry(value: unknown): Checked<CassetteEntry>;
export function checkEntry(value: unknown, usageRequired: false): Checked<EndpointAnswer>;
export function checkEntry(value: unknown, usageRequired = true): Checked<CassetteEntry | EndpointAnswer> {
  const r = (usageRequired ? ENTRY : ANSWER).safeParse(value);
  if (r.success) return { entry: r.data as CassetteEntry };
  const issue = r.error.issues[0]!;
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  // Said as every input file's problems are (`issueText`: the value it got included), not in zod's words.
  if (issue.code === 'unrecognized_keys') return { issue: { path: [...path, issue.keys[0]!], message: `unknown key "${issue.keys[0]}"` } };
  const got = valueAt(value, path);
  // A check of a decoded value (a vector's float) has no written value there to show.
  return { issue: { path, message: issue.code === 'custom' && got === undefined ? issue.message : issueText(issue, got) } };
}

/** A response that meets the rules, or what is wrong with it. */
type Checked<T> = { entry: T; issue?: undefined } | { entry?: undefined; issue: EntryIssue };

/** A response as an endpoint gave it: a cassette entry whose `usage` is absent when the endpoint reports none. */
export type EndpointAnswer = Omit<CassetteEntry, 'usage'> & { usage?: BilledUsage };

/** Where a model's first vector came from: a line of a file, or a response (no file). */
interface VectorOrigin {
  n: number;
  file?: string;
  line?: number;
}

/**
 * A cassette: recorded upkeep responses by request key. On disk it is JSON
 * Lines, one response per line, sorted by key, so a recording that adds
 * responses adds lines and a review diff shows only those.
 */
export class Cassette {
  private readonly byKey = new Map<string, CassetteEntry>();
  /** Per embedding model, the length of its vectors and where the first came from: a model gives all its vectors one length (they are compared with each other). */
  private readonly dimensions = new Map<string, VectorOrigin>();

  constructor(entries: Iterable<CassetteEntry> = []) {
    for (const e of entries) this.add(e);
  }

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): CassetteEntry | undefined {
    return this.byKey.get(key);
  }

  /** Adds (or replaces) a response; `from` says where it was read, for a later vector of another length to name. */
  add(entry: CassetteEntry, from: Omit<VectorOrigin, 'n'> = {}): void {
    this.byKey.set(entry.key, entry);
    if (entry.vector !== undefined && !this.dimensions.has(entry.model)) this.dimensions.set(entry.model, { n: vectorLength(entry.vector), ...from });
  }

  /** What is wrong with adding a response whose vector's length is not its model's (in `file`, a line of the same file is named by its number alone). */
  dimensionIssue(entry: Pick<CassetteEntry, 'model' | 'vector'>, file?: string): EntryIssue | undefined {
    const first = entry.vector === undefined ? undefined : this.dimensions.get(entry.model);
    if (!first || first.n === vectorLength(entry.vector!)) return undefined;
    const where = first.line === undefined ? 'in an earlier response' : `on line ${first.line}${first.file === file ? '' : ` of ${first.file}`}`;
    return { path: ['vector'], message: `${vectorLength(entry.vector!)} dimensions, but ${entry.model}'s vector ${where} has ${first.n} (a model's vectors are compared with each other)` };
  }

  /** The entries in key order (plain data: what crosses to worker threads). */
  entries(): CassetteEntry[] {
    return [...this.byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The file's text: one entry per line, in key order, fields in a fixed order. */
  text(): string {
    return [...this.lines()].join('');
  }

  /** The file's lines, one at a time (a cassette may be larger than a string can be). */
  *lines(): Generator<string> {
    for (const e of this.entries()) yield entryLine(e);
  }

  /**
   * Reads a cassette file's text (or a recording's journal, `into` the
   * cassette it adds to: its responses replace the cassette's, and its
   * vectors are checked against the cassette's); every bad line is a problem
   * at its line, naming the field and value.
   */
  static parse(file: string, text: string, into = new Cassette()): Cassette {
    const parser = Cassette.parser(file, into);
    text.split('\n').forEach((raw, i) => parser.line(raw, i + 1));
    return parser.done();
  }

  /**
   * `parse` a line at a time (a file read in chunks: a cassette may be
   * larger than a string can be): `line` takes each with its number, `done`
   * throws every problem found, or gives the cassette.
   */
  static parser(file: string, into = new Cassette()): { line(raw: string, line: number): void; done(): Cassette } {
    const problems: Problem[] = [];
    const seen = new Map<string, number>();
    return {
      line(raw, line) {
        if (!raw.trim()) return;
        let value: unknown;
        try {
          value = JSON.parse(raw);
        } catch (e) {
          problems.push({ file, line, path: '', message: `not a JSON object (${jsonSyntaxReason((e as Error).message)})` });
          return;
        }
        const checked = checkEntry(value);
        const issue = checked.issue ?? into.dimensionIssue(checked.entry, file);
        if (issue) {
          problems.push({ file, line, path: formatPath(issue.path), message: `${issue.message}${issue.got === undefined ? '' : ` (got ${show(issue.got)})`}` });
          return;
        }
        const entry = checked.entry!;
        const first = seen.get(entry.key);
        if (first !== undefined) problems.push({ file, line, path: 'key', message: `${entry.key} is recorded twice (also on line ${first})` });
        seen.set(entry.key, line);
        into.add(entry, { file, line });
      },
      done() {
        if (problems.length) throw new ScenarioError(problems);
        return into;
      },
    };
  }
}

const digests = new WeakMap<readonly CassetteEntry[], string>();

/**
 * The SHA-256 of the text of a cassette of `entries`, hashed a line at a
 * time (a cassette may be larger than a string can be); once per list.
 */
export function cassetteDigest(entries: readonly CassetteEntry[]): string {
  let digest = digests.get(entries);
  if (digest === undefined) {
    const hash = createHash('sha256');
    for (const line of new Cassette(entries).lines()) hash.update(line);
    digests.set(entries, (digest = hash.digest('hex')));
  }
  return digest;
}

/** A response's line in a cassette or a journal: fields in a fixed order, a newline after. */
export function entryLine(e: CassetteEntry): string {
  return `${JSON.stringify({ key: e.key, kind: e.kind, model: e.model, ...(e.text !== undefined ? { text: e.text } : { vector: e.vector }), usage: usageLine(e.usage) })}\n`;
}

/** A usage in a line's fixed order: cache reads and writes only when there were some (a line without them is as it always was). */
function usageLine(u: BilledUsage): BilledUsage {
  return { input: u.input, ...(u.cached && { cached: u.cached }), ...(u.written && { written: u.written }), output: u.output };
}

/** The number of float32 values a stored vector holds. */
function vectorLength(base64: string): number {
  return Buffer.byteLength(base64, 'base64') / 4;
}

/** Whether a text is the base64 of a whole number of float32 values (at least one). */
function isFloat32Base64(text: string): boolean {
  const bytes = Buffer.from(text, 'base64');
  return bytes.length > 0 && bytes.length % 4 === 0 && bytes.toString('base64') === text;
}
