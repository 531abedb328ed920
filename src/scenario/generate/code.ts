import type { Stream } from './stream.js';

/**
 * Plausible source code for the coding profile: functions built from
 * verb/noun identifiers and a handful of statement kinds per language, so
 * code blocks tokenize like real code.
 */
export interface Language {
  /** The fact value: how a user names the language (with a version, so a code fence alone does not state it). */
  name: string;
  fence: string;
  frameworks: readonly string[];
  snake: boolean;
  comment: string;
  fn(name: string, param: string, body: readonly string[]): string[];
  assign(v: string, call: string, arg: string): string;
  guard(v: string, msg: string): string[];
  loop(item: string, list: string, inner: string): string[];
  log(msg: string, v: string): string;
  ret(v: string): string;
  call(name: string, arg: string): string;
}

const I = '    ';

export const LANGUAGES: readonly Language[] = [
  {
    name: 'TypeScript',
    fence: 'ts',
    frameworks: ['NestJS', 'Fastify', 'Next.js', 'Express'],
    snake: false,
    comment: '//',
    fn: (n, p, b) => [`export async function ${n}(${p}: string) {`, ...b.map((l) => `  ${l}`), '}'],
    assign: (v, c, a) => `const ${v} = await ${c}(${a});`,
    guard: (v, m) => [`if (!${v}) throw new Error('${m}');`],
    loop: (i, l, s) => [`for (const ${i} of ${l}) {`, `  ${s}`, '}'],
    log: (m, v) => `logger.info('${m}', { ${v} });`,
    ret: (v) => `return ${v};`,
    call: (n, a) => `await ${n}(${a});`,
  },
  {
    name: 'Python 3.12',
    fence: 'python',
    frameworks: ['Django', 'FastAPI', 'Flask'],
    snake: true,
    comment: '#',
    fn: (n, p, b) => [`def ${n}(${p}):`, ...b.map((l) => `${I}${l}`)],
    assign: (v, c, a) => `${v} = ${c}(${a})`,
    guard: (v, m) => [`if not ${v}:`, `${I}raise ValueError("${m}")`],
    loop: (i, l, s) => [`for ${i} in ${l}:`, `${I}${s}`],
    log: (m, v) => `logger.info("${m}: %s", ${v})`,
    ret: (v) => `return ${v}`,
    call: (n, a) => `${n}(${a})`,
  },
  {
    name: 'Go 1.22',
    fence: 'go',
    frameworks: ['Fiber', 'gorilla/mux'],
    snake: false,
    comment: '//',
    fn: (n, p, b) => [`func ${n[0]!.toUpperCase()}${n.slice(1)}(${p} string) (any, error) {`, ...b.map((l) => `\t${l}`), '}'],
    assign: (v, c, a) => `${v}, err := ${c}(${a})`,
    guard: (v, m) => [`if err != nil || ${v} == nil {`, `\treturn nil, fmt.Errorf("${m}: %w", err)`, '}'],
    loop: (i, l, s) => [`for _, ${i} := range ${l} {`, `\t${s}`, '}'],
    log: (m, v) => `log.Printf("${m}: %v", ${v})`,
    ret: (v) => `return ${v}, nil`,
    call: (n, a) => `${n}(${a})`,
  },
  {
    name: 'Rust 1.79',
    fence: 'rust',
    frameworks: ['Axum', 'Actix Web', 'Rocket'],
    snake: true,
    comment: '//',
    fn: (n, p, b) => [`pub fn ${n}(${p}: &str) -> Result<Value, AppError> {`, ...b.map((l) => `${I}${l}`), '}'],
    assign: (v, c, a) => `let ${v} = ${c}(${a})?;`,
    guard: (v, m) => [`if ${v}.is_empty() {`, `${I}return Err(AppError::new("${m}"));`, '}'],
    loop: (i, l, s) => [`for ${i} in ${l}.iter() {`, `${I}${s}`, '}'],
    log: (m, v) => `tracing::info!("${m}: {:?}", ${v});`,
    ret: (v) => `Ok(${v})`,
    call: (n, a) => `${n}(${a})?;`,
  },
  {
    name: 'Java 21',
    fence: 'java',
    frameworks: ['Spring Boot', 'Quarkus', 'Micronaut'],
    snake: false,
    comment: '//',
    fn: (n, p, b) => [`public Object ${n}(String ${p}) {`, ...b.map((l) => `${I}${l}`), '}'],
    assign: (v, c, a) => `var ${v} = ${c}(${a});`,
    guard: (v, m) => [`if (${v} == null) {`, `${I}throw new IllegalStateException("${m}");`, '}'],
    loop: (i, l, s) => [`for (var ${i} : ${l}) {`, `${I}${s}`, '}'],
    log: (m, v) => `log.info("${m}: {}", ${v});`,
    ret: (v) => `return ${v};`,
    call: (n, a) => `${n}(${a});`,
  },
  {
    name: 'Ruby 3.3',
    fence: 'ruby',
    frameworks: ['Rails', 'Sinatra', 'Hanami'],
    snake: true,
    comment: '#',
    fn: (n, p, b) => [`def ${n}(${p})`, ...b.map((l) => `  ${l}`), 'end'],
    assign: (v, c, a) => `${v} = ${c}(${a})`,
    guard: (v, m) => [`raise ArgumentError, "${m}" unless ${v}`],
    loop: (i, l, s) => [`${l}.each do |${i}|`, `  ${s}`, 'end'],
    log: (m, v) => `logger.info("${m}: #{${v}}")`,
    ret: (v) => v,
    call: (n, a) => `${n}(${a})`,
  },
];

const VERBS = ['fetch', 'load', 'parse', 'validate', 'save', 'update', 'build', 'normalize', 'resolve', 'render', 'sync', 'compute', 'merge', 'retry', 'cache'];
const NOUNS = ['user', 'order', 'invoice', 'session', 'config', 'payload', 'token', 'report', 'cart', 'profile', 'event', 'route', 'batch', 'webhook'];
const VARS = ['result', 'rows', 'items', 'data', 'entry', 'record', 'total', 'parsed', 'response', 'current'];
const MESSAGES = ['missing value', 'invalid input', 'not found', 'request failed', 'unexpected state', 'timeout while waiting'];

function ident(rng: Stream, snake: boolean, parts: readonly string[][]): string {
  const words = parts.map((p) => rng.pick(p));
  return snake ? words.join('_') : words[0]! + words.slice(1).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/** One function of roughly `lines` lines, as a fenced code block. */
export function codeBlock(rng: Stream, lang: Language, lines: number, extraHeader?: string): string {
  const fn = ident(rng, lang.snake, [VERBS, NOUNS]);
  const param = ident(rng, lang.snake, [NOUNS, ['id', 'key', 'name']]);
  const body: string[] = [];
  let v = rng.pick(VARS);
  body.push(lang.assign(v, ident(rng, lang.snake, [VERBS, NOUNS]), param));
  let guarded = false;
  let loops = 0;
  while (body.length < Math.max(2, lines - 3)) {
    const r = rng.float();
    // One guard per value and at most two loops over it: more reads like noise.
    if (r < 0.3 && !guarded) {
      body.push(...lang.guard(v, rng.pick(MESSAGES)));
      guarded = true;
    } else if (r < 0.5 && loops < 2) {
      const item = rng.pick(['item', 'row', 'line']);
      body.push(...lang.loop(item, v, lang.call(ident(rng, lang.snake, [VERBS, NOUNS]), item)));
      loops++;
    } else if (r < 0.65) body.push(lang.log(`${rng.pick(VERBS)} ${rng.pick(NOUNS)}`, v));
    else if (r < 0.75) body.push(`${lang.comment} ${rng.pick(['TODO: handle the empty case', 'keep this idempotent', 'called from the worker too', 'see the migration notes'])}`);
    else {
      const next = rng.pick(VARS.filter((x) => x !== v));
      body.push(lang.assign(next, ident(rng, lang.snake, [VERBS, NOUNS]), v));
      v = next;
      guarded = false;
      loops = 0;
    }
  }
  body.push(lang.ret(v));
  const header = extraHeader ? [`${lang.comment} ${extraHeader}`] : [];
  return ['```' + lang.fence, ...header, ...lang.fn(fn, param, body), '```'].join('\n');
}
