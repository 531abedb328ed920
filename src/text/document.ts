import { Composer, CST, isAlias, isMap, isNode, isPair, isScalar, Lexer, LineCounter, Parser, visit, YAMLParseError, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { ScenarioError, type Problem } from '../errors.js';

export type DocPath = readonly (string | number)[];

/** Formats a document path as `turns[3].user`; a key with a dot or a slash (a policy module's path) in brackets: `policies[1]["./policies/edges.mjs"].summaryModel`. */
export function formatPath(path: DocPath): string {
  let out = '';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : DOTTED_KEY.test(part) ? `["${part}"]` : out ? `.${part}` : part;
  return out;
}

/** A key a dot would not set apart: one with a dot or a slash in it (a path). */
const DOTTED_KEY = /[./]/;

/** A parsed YAML or JSON file that can say where any path in it is. */
export class SourceDoc {
  private constructor(
    readonly file: string,
    private readonly doc: Document | undefined,
    private readonly lines: LineCounter | undefined,
    private readonly raw?: unknown,
  ) {}

  /** The places of values found nested too deep, each reported once. */
  private readonly tooDeep = new Set<string>();

  /**
   * Wraps a value built in memory (a generated or imported scenario) so it is
   * validated like a file; its problems carry the file and path but no line.
   */
  static fromValue(file: string, value: unknown): SourceDoc {
    return new SourceDoc(file, undefined, undefined, value);
  }

  /**
   * Parses YAML (JSON is read by the same parser, so positions work for
   * both). A text over `MAX_DOC_CHARS`, or with more than `maxTokens`
   * values and indicators (`MAX_DOC_TOKENS`; a test gives fewer), is a
   * `DocTooLarge` problem, refused before its cost is paid.
   */
  static parse(file: string, text: string, maxTokens = MAX_DOC_TOKENS): SourceDoc {
    if (text.length > MAX_DOC_CHARS) throw new DocTooLarge({ file, path: '', message: `is too large to parse (${(text.length / 1e6).toFixed(1)} MB of text; at most ${MAX_DOC_CHARS / 1e6} MB)` });
    const lines = new LineCounter();
    const at = (offset: number, message: string): Problem => {
      const pos = lines.linePos(offset);
      return { file, line: pos.line, column: pos.col, path: '', message };
    };
    const doc = parseBounded(text, lines, maxTokens, (offset) => {
      throw new DocTooLarge(at(offset, `too many values to parse (over ${maxTokens.toLocaleString('en-US')} values and indicators by here)`));
    });
    // A parser out of stack says so, maybe more than once, and what else it says depends on where the stack ran out
    // (which varies with how warm the parser's code is): that it ran out, once, is the problem.
    const exhausted = doc.errors.find((e) => e.code === 'RESOURCE_EXHAUSTION');
    const errors = exhausted ? [exhausted] : doc.errors;
    const syntax = [...errors.map((e) => ({ offset: e.pos[0], message: syntaxMessage(e) })), ...unknownTags(doc), ...duplicateKeys(doc)].sort((a, b) => a.offset - b.offset);
    if (syntax.length) throw new ScenarioError(syntax.map((e) => at(e.offset, e.message)));
    const problems = aliasProblems(doc).map((p) => at(p.offset, p.message));
    if (problems.length) throw new ScenarioError(problems);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (e) {
      // The only errors toJS throws once every alias resolves: too many expansions.
      if (!(e instanceof ReferenceError)) throw e;
      throw new ScenarioError([at(firstAlias(doc), `aliases expand too often (over ${MAX_ALIAS_COUNT} copies, as in an alias bomb); write the values out`)]);
    }
    return new SourceDoc(file, doc, lines, value);
  }

  /** The plain value: a parsed file's is built once, when it is parsed. */
  get value(): unknown {
    return this.raw;
  }

  /** The problem at a path: positioned at the node, or at the nearest parent that exists. */
  problem(path: DocPath, message: string, atKey = false): Problem {
    if (!this.doc || !this.lines) return { file: this.file, path: formatPath(path), message };
    let offset = 0;
    for (let n = path.length; n >= 0; n--) {
      const node = this.node(path.slice(0, n), atKey && n === path.length);
      if (node?.range) {
        offset = node.range[0];
        break;
      }
    }
    const pos = this.lines.linePos(offset);
    return { file: this.file, line: pos.line, column: pos.col, path: formatPath(path), message };
  }

  /** The value node at `path`, or with `key` its key node. */
  private node(path: DocPath, key: boolean): Node | undefined {
    if (!this.doc) return undefined;
    if (!key || path.length === 0) {
      const n = this.doc.getIn(path as (string | number)[], true);
      return n && typeof n === 'object' && 'range' in n ? (n as Node) : undefined;
    }
    const parent = this.doc.getIn(path.slice(0, -1) as (string | number)[], true);
    if (!isMap(parent)) return undefined;
    const name = path[path.length - 1];
    const pair = parent.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === name);
    return pair && isScalar(pair.key) ? pair.key : undefined;
  }

  /** Validates the value at `path` against a schema; problems go to `out`. */
  check<T>(schema: z.ZodType<T>, value: unknown, path: DocPath, out: Problem[]): T | undefined {
    const deep = deepPath(value);
    if (deep) {
      // Named at the last key before the nesting (within a few levels), once: a part checked again is the same problem.
      const whole = [...path, ...deep];
      let key = Math.min(whole.length, 16);
      while (key > path.length + 1 && typeof whole[key - 1] !== 'string') key--;
      const at = whole.slice(0, key);
      const shown = formatPath(at);
      if (!this.tooDeep.has(shown)) out.push(this.problem(at, `lists and mappings nested more than ${MAX_DEPTH} deep`));
      this.tooDeep.add(shown);
      return undefined;
    }
    // zod builds records and objects by assignment, which drops a key named `__proto__` (a fact may
    // be named so): such keys are renamed for the parse and named back in its result and its problems.
    const renamed = hasProtoKey(value);
    const r = schema.safeParse(renamed ? rename(value, PROTO, PROTO_STANDIN) : value);
    if (r.success) return renamed ? (rename(r.data, PROTO_STANDIN, PROTO) as T) : r.data;
    for (const issue of r.error.issues) {
      const at = [...path, ...(issue.path as (string | number)[]).map(named)];
      if (issue.code === 'unrecognized_keys') {
        // Each place is a search of the mapping: listing a few keys keeps a file of thousands linear.
        const keys = issue.keys.slice(0, MAX_UNKNOWN_KEYS).map(named);
        for (const key of keys) out.push(this.problem([...at, key], `unknown key "${key.length > 60 ? `${key.slice(0, 57)}...` : key}"`, true));
        const more = issue.keys.length - keys.length;
        if (more > 0) out.push(this.problem(at, `and ${more} more unknown key${more === 1 ? '' : 's'}`));
        continue;
      }
      // A record's key that its schema refuses is shown, and placed, as the key.
      if (issue.code === 'invalid_key') out.push(this.problem(at, `${issue.issues[0]?.message ?? issue.message}, got ${show(at[at.length - 1])}`, true));
      else out.push(this.problem(at, issueText(issue, valueAt(value, at.slice(path.length)))));
    }
    return undefined;
  }
}

/**
 * How deep lists and mappings may nest in a value a schema checks: far
 * beyond any dataset's (a dozen levels), well within what the checks and
 * the parser (about 800 levels) can walk without running out of stack.
 */
const MAX_DEPTH = 256;

/** The path of a list or mapping nested more than `MAX_DEPTH` deep in `v`, found without recursion; undefined when there is none. */
function deepPath(v: unknown): DocPath | undefined {
  // The values still to visit and their depths; a path is made only for a value found too deep.
  const values: unknown[] = [v];
  const depths: number[] = [0];
  while (values.length) {
    const x = values.pop();
    const depth = depths.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth === MAX_DEPTH) return pathTo(v, x);
    for (const y of Object.values(x)) {
      values.push(y);
      depths.push(depth + 1);
    }
  }
  return undefined;
}

/** The path from `root` to `target`, a value inside it (found by a walk without recursion). */
function pathTo(root: unknown, target: unknown): DocPath {
  const stack: [unknown, (string | number)[]][] = [[root, []]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [x, path] = top;
    if (x === target) return path;
    if (x !== null && typeof x === 'object') for (const [k, y] of Object.entries(x)) stack.push([y, [...path, Array.isArray(x) ? Number(k) : k]]);
  }
  return [];
}

const CORE_TAGS = ['!!str', '!!int', '!!float', '!!bool', '!!null', '!!map', '!!seq'];

/**
 * Tags the core schema does not resolve (`!foo`, `!!js/function`, `!!omap`):
 * the parser only warns and reads the value as if untagged, a string where a
 * `!!float` was meant; here each is an error at its value.
 */
function unknownTags(doc: Document.Parsed): { offset: number; message: string }[] {
  return doc.warnings
    .filter((w) => w.code === 'TAG_RESOLVE_FAILED')
    .map((w) => {
      const tag = (/^Unresolved tag: (\S+)/.exec(w.message)?.[1] ?? '').replace(/^tag:yaml\.org,2002:/, '!!');
      const message = CORE_TAGS.includes(tag) ? `${tag} does not fit the value: write one it fits, or no tag` : `unknown tag ${tag}: the tags read are the core ones (${CORE_TAGS.join(', ')})`;
      return { offset: w.pos[0], message };
    });
}

/**
 * The parser's messages that end by quoting the text it met: what is quoted
 * is left out. A file read where a scenario, a study or a price table
 * belongs may be any file a link leads to (`../.git/config`, which a CI
 * checkout may leave holding its token): its text is not printed into the
 * job's log. The line and column still point at it.
 */
const QUOTING = /^(Unexpected [\w-]+ token in YAML stream|Block scalar header includes extra characters|Not a YAML token): .*$/;

/** A syntax error's message: its first line without the text it quotes (`QUOTING`), and what a parser that ran out of stack met. */
function syntaxMessage(e: YAMLParseError): string {
  return e.code === 'RESOURCE_EXHAUSTION' ? 'lists and mappings nested too deep to parse' : firstLine(e.message).replace(QUOTING, '$1');
}

/** How many unknown keys of one mapping are listed, each with its place; the rest are counted. */
const MAX_UNKNOWN_KEYS = 20;

/** How many alias expansions a file may make (the `yaml` package's guard against alias bombs). */
const MAX_ALIAS_COUNT = 1000;

/**
 * The longest text `SourceDoc.parse` takes: 32 million characters (32 MB of
 * ASCII). A parsed document costs many times its text (measured with Node's
 * 4 GB default heap: a 60 MB double-quoted scalar peaked at 3.2 GB, a 100 MB
 * one at 3.5 GB; 20 MB of `[0,0,…]` ran the heap out and aborted the
 * process), so the bound sits where the costliest text stays within 2 GB.
 */
export const MAX_DOC_CHARS = 32_000_000;

/**
 * The most values and indicators (scalars, `-`, `:`, `,`, `{`, `[`, anchors,
 * aliases, tags) `SourceDoc.parse` takes: each costs the parse up to about a
 * kilobyte (a document of a million `0,` peaked at 1.0 GB; 4 MB of
 * `[0,0,…]`, 4.2 million of them, took 1.9 GB of heap). Counted as the
 * text is parsed, so a document past it is refused before its cost is paid
 * (10 MB of `[0,0,…]`: refused at 0.3 GB). A 10,000-turn scenario has about
 * 110,000; LiteLLM's whole price table 136,000.
 */
export const MAX_DOC_TOKENS = 1_000_000;

/** A document too large to parse: a problem of its file (`SourceDoc.parse`), which a reader that only wants positions can do without. */
export class DocTooLarge extends ScenarioError {
  constructor(problem: Problem) {
    super([problem]);
  }
}

/** The lexical tokens counted against `MAX_DOC_TOKENS` (spaces, newlines, comments and the ends of flow collections are not). */
const COUNTED: ReadonlySet<string> = new Set(['scalar', 'single-quoted-scalar', 'double-quoted-scalar', 'block-scalar-header', 'flow-map-start', 'flow-seq-start', 'seq-item-ind', 'explicit-key-ind', 'map-value-ind', 'comma', 'anchor', 'alias', 'tag']);

/**
 * Parses one YAML document as `parseDocument` of the yaml package does
 * (a second document is an error, said in our words: the package's names
 * its own API), counting its tokens as they are lexed:
 * past `maxTokens`, `tooMany` is called with the offset reached (and
 * must throw). The parser's own unique-key check compares every key with
 * every other: duplicateKeys does it in one pass.
 */
function parseBounded(text: string, lines: LineCounter, maxTokens: number, tooMany: (offset: number) => never): Document.Parsed {
  // Every line start from the text itself: the parser reports only the newlines it reads as such, not those inside a
  // token it takes whole (text after a flow collection, as in a git config), which would put later places on an earlier line.
  lines.addNewLine(0);
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
  const parser = new Parser();
  function* tokens(): Generator<CST.Token> {
    let n = 0;
    for (const lexeme of new Lexer().lex(text)) {
      if (COUNTED.has(CST.tokenType(lexeme) ?? '') && ++n > maxTokens) tooMany(parser.offset);
      yield* parser.next(lexeme);
    }
    yield* parser.end();
  }
  let doc: Document.Parsed | undefined;
  // Tags beyond the core schema's (!!omap, !!set, !!binary, !!timestamp) would make values no check reads: they stay unresolved, an error.
  for (const next of new Composer({ prettyErrors: false, uniqueKeys: false, resolveKnownTags: false }).compose(tokens(), true, text.length)) {
    if (doc) {
      doc.errors.push(new YAMLParseError(next.range.slice(0, 2) as [number, number], 'MULTIPLE_DOCS', 'a second YAML document starts here; a file holds one (ctxsim generate and ctxsim import write one file each with --out DIR)'));
      break;
    }
    doc = next;
  }
  return doc!;
}

/**
 * Aliases that cannot become a plain value: one naming no anchor before it,
 * and one inside the node it names (a cycle). Anchors resolve as YAML says:
 * the last one of the name before the alias.
 */
function aliasProblems(doc: Document): { offset: number; message: string }[] {
  const anchors = new Map<string, Node>();
  const out: { offset: number; message: string }[] = [];
  visit(doc, (_key, node, path) => {
    if (isNode(node) && !isAlias(node) && node.anchor) anchors.set(node.anchor, node);
    if (!isAlias(node)) return;
    const target = anchors.get(node.source);
    const offset = node.range?.[0] ?? 0;
    if (!target) out.push({ offset, message: `alias *${node.source} names no anchor &${node.source} before it` });
    else if (path.includes(target)) out.push({ offset, message: `alias *${node.source} is inside the node &${node.source} it names (a cycle)` });
  });
  return out;
}

/** Keys written twice in one mapping (compared by their value, as YAML's own check does), each at the repeat. */
function duplicateKeys(doc: Document): { offset: number; message: string }[] {
  const out: { offset: number; message: string }[] = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) out.push({ offset: pair.key.range?.[0] ?? 0, message: 'Map keys must be unique' });
        seen.add(pair.key.value);
      }
    },
  });
  return out;
}

/** Where the first alias is (an alias bomb is reported there). */
function firstAlias(doc: Document): number {
  let offset = 0;
  visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  return offset;
}

const PROTO = '__proto__';
const PROTO_STANDIN = '\u0000__proto__';

function isPlain(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A key as the user wrote it. */
const named = <K extends string | number>(k: K): K | typeof PROTO => (k === PROTO_STANDIN ? PROTO : k);

/** Whether a plain object anywhere in `v` has an own key `__proto__`. */
function hasProtoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasProtoKey);
  if (!isPlain(v)) return false;
  return Object.hasOwn(v, PROTO) || Object.values(v).some(hasProtoKey);
}

/** A copy of `v` with every plain object's key `from` named `to`, in place (keys are defined, never assigned). */
function rename(v: unknown, from: string, to: string): unknown {
  if (Array.isArray(v)) return v.map((x) => rename(x, from, to));
  if (!isPlain(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k === from ? to : k, rename(x, from, to)]));
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

export function valueAt(root: unknown, path: DocPath): unknown {
  let v = root;
  for (const p of path) v = v && typeof v === 'object' ? (v as Record<string | number, unknown>)[p] : undefined;
  return v;
}

/** Shows a bad value briefly: `"bot"`, `42`, `a list`. */
export function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  // A number too large for a double (`1e400` in JSON) is Infinity: JSON.stringify would say null.
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}..."` : s;
}

/** A value with its type: `number 5`, `string "5"`; `null`, `a list` and `a mapping` name their type already. */
function typed(v: unknown): string {
  return v === null || typeof v === 'object' ? show(v) : `${typeof v} ${show(v)}`;
}

/** How a message names the type zod expected. */
const EXPECTED: Partial<Record<string, string>> = { record: 'mapping', object: 'mapping', array: 'list', int: 'a whole number' };

/** A zod issue as a problem's message, `value` the value at its place (`expected one of auto|off, got "sometimes"`). */
export function issueText(issue: z.core.$ZodIssue, value: unknown): string {
  if (value === undefined && issue.code === 'invalid_union') return 'required but missing';
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return 'required but missing';
      if (typeof value === 'number' && !Number.isFinite(value)) return `expected a finite number, got ${show(value)}`;
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${typed(value)}${typeof value === 'number' && issue.expected === 'string' ? ' (quote it)' : ''}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map(String).join('|')}, got ${show(value)}`;
    case 'invalid_union': {
      // 1e400 reads as Infinity, a number no branch takes: "expected number or mapping, got number Infinity" would say it is one.
      if (typeof value === 'number' && !Number.isFinite(value)) return `expected a finite number, got ${show(value)}`;
      // A discriminator's value none of the union's members has: said as an enum's is, not as zod's "Invalid discriminator value".
      const options = (issue as { options?: unknown }).options;
      if (Array.isArray(options) && options.length) return `expected one of ${options.map(String).join('|')}, got ${show(value)}`;
      // A value of none of the union's types: the types, as for one (`expected string or number, got null`), not zod's "Invalid input".
      const types = issue.errors.map((branch) => (branch.length === 1 && branch[0]!.code === 'invalid_type' && branch[0]!.path.length === 0 ? (EXPECTED[branch[0]!.expected] ?? branch[0]!.expected) : undefined));
      if (types.length && types.every((t) => t !== undefined)) return `expected ${[...new Set(types)].join(' or ')}, got ${typed(value)}`;
      return `${issue.message}, got ${show(value)}`;
    }
    case 'too_small':
      if (issue.origin === 'array') return `expected at least ${issue.minimum} item(s)`;
      // Said as the other bounds are, not in zod's words ("Too small: expected string to have >=1 characters").
      if (issue.origin === 'string' && issue.message.startsWith('Too small')) return `${issue.minimum === 1 ? 'expected a non-empty string' : `expected at least ${issue.minimum} characters`}, got ${show(value)}`;
      if (issue.origin === 'number' || issue.origin === 'int') return `expected ${issue.origin === 'int' ? 'a whole number' : 'a number'} ${issue.inclusive ? '≥' : '>'} ${issue.minimum}, got ${show(value)}`;
      return `${issue.message}, got ${show(value)}`;
    case 'too_big':
      if (issue.origin === 'array') return `expected at most ${issue.maximum} item(s)`;
      if (issue.origin === 'number' || issue.origin === 'int') return `expected ${issue.origin === 'int' ? 'a whole number' : 'a number'} ${issue.inclusive ? '≤' : '<'} ${issue.maximum}, got ${show(value)}`;
      return `${issue.message}, got ${show(value)}`;
    default:
      return `${issue.message}, got ${show(value)}`;
  }
}
