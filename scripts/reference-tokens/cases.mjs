#!/usr/bin/env node
/**
 * Step 1 of the reference token counts (see README.md): writes to stdout, as
 * JSON, the inputs the reference renders and counts: per open-weight tokenizer
 * of src/tokens/open-weights.ts (read from its build, dist/), the pinned files
 * and their SHA-256, the conversations (OpenAI chat shape, as the family's
 * template reads them) and the plain texts. Deterministic: no clock, no
 * randomness but a fixed-seed generator.
 *
 *   node scripts/reference-tokens/cases.mjs > "$W/cases.json"
 */
import { OPEN_WEIGHTS } from '../../dist/tokens/open-weights.js';

/** A fixed-seed generator (mulberry32), so the texts are the same on every run. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROSE =
  'The committee met on Tuesday to review the quarterly figures. Revenue rose 4.2% while costs held steady, ' +
  "and the board agreed to postpone the warehouse expansion until next spring. \"We'll revisit it in April,\" the chair said.\n\n" +
  'Several members asked for a clearer breakdown of shipping delays; the operations team promised a report by Friday.';

const CODE = [
  'Why does this fail with a TypeError?',
  '',
  '```ts',
  'export function mean(xs: readonly number[]): number {',
  '  if (xs.length === 0) throw new RangeError(`empty input`);',
  '  return xs.reduce((a, b) => a + b, 0) / xs.length;',
  '}',
  '',
  'const m = mean(JSON.parse("[1, 2, 3]") as number[]);  // 2',
  '```',
  '',
  '```python',
  'def fib(n: int) -> int:',
  '\tif n < 2:',
  '\t\treturn n',
  '\treturn fib(n - 1) + fib(n - 2)',
  '',
  'print({k: fib(k) for k in range(10)})',
  '```',
].join('\n');

const CODE_ANSWER =
  'The `reduce` call is fine; the error comes from `JSON.parse` returning `unknown` at runtime.\n\n' +
  '```ts\nconst xs: unknown = JSON.parse(text);\nif (!Array.isArray(xs)) throw new TypeError("not an array");\n```\n\n' +
  'In Python, `fib` is exponential: use `functools.lru_cache` or an iterative loop.';

const UNICODE =
  '你好，世界！今天的天气很好，我们去公园散步吧。日本語のテキストも混ぜます：東京タワーは高いです。' +
  '한국어 문장도 있습니다. Ελληνικά, Русский текст, العربية, עברית, हिन्दी.\n' +
  'Emoji: 🎉🚀👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇫🇷🇯🇵 — café, naïve, façade, Ångström, Straße, déjà vu.';

const UNICODE_ANSWER = '好的！🌳 公園は素敵ですね。Let\'s go — ça marche 👌.';

/** A long system prompt (about 6 KB): numbered rules, varied wording. */
function longSystem() {
  const topics = ['refunds', 'shipping', 'warranty', 'privacy', 'accounts', 'billing', 'returns', 'escalation', 'tone', 'languages'];
  const verbs = ['Always confirm', 'Never promise', 'Politely explain', 'Check twice', 'Summarize', 'Ask about'];
  const lines = ['You are the support assistant of Acme Outfitters. Follow every rule below.', ''];
  for (let i = 0; i < 60; i++) {
    const topic = topics[i % topics.length];
    const verb = verbs[(i * 7) % verbs.length];
    lines.push(`${i + 1}. ${verb} the ${topic} policy (section ${String.fromCharCode(65 + (i % 26))}.${i % 9}) before answering; quote at most ${10 + i} words, and link to https://acme.example/${topic}#${i}.`);
  }
  lines.push('', 'If a rule conflicts with the law of the customer\'s country, the law wins. Answer in the customer\'s language (español, français, 日本語 …).');
  return lines.join('\n');
}

const MULTI_TURN = [
  ['user', 'I want to plan a three-day trip to Lisbon.'],
  ['assistant', 'Great choice! Do you prefer museums, food, or walking tours?'],
  ['user', 'Mostly food, and some walking.'],
  ['assistant', 'Day 1: Alfama walk and a fado dinner. Day 2: Time Out Market and Belém (pastéis de nata!). Day 3: Sintra day trip.'],
  ['user', 'How do I get to Sintra?'],
  ['assistant', 'Take the train from Rossio station: about 40 minutes, trains every 20–30 minutes, €2.40 each way.'],
  ['user', 'Is it worth buying a Lisboa Card?'],
  ['assistant', 'If you visit 3+ museums and use transit a lot, yes; for a food-focused trip it rarely pays off.'],
  ['user', 'What about tipping in restaurants?'],
  ['assistant', 'Tipping is modest: round up or leave 5–10% for good service.'],
  ['user', 'And one vegetarian place you recommend?'],
  ['assistant', 'Try "Ao 26 – Vegan Food Project" near Chiado.'],
  ['user', 'Thanks! Can you summarize the whole plan in a table?'],
];

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather for a city. Units: "metric" or "imperial"; a < b & c > d stays as is.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name, e.g. São Paulo' },
          units: { type: 'string', enum: ['metric', 'imperial'] },
        },
        required: ['city'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search_docs',
      description: 'Full-text search over the product manual.',
      parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 20 } }, required: ['query'] },
    },
  },
];

const msg = (role, content) => ({ role, content });

/** The conversations of one family, shaped as its template reads them. */
function casesFor(name, source) {
  const alternating = name === 'gemma3' || name === 'mistral-nemo' || name === 'mistral-v3';
  const coded = 'format' in source.template;
  const tools = coded || ['qwen2.5', 'qwen3', 'llama3.1', 'deepseek-v3', 'mistral-nemo', 'mistral-v3'].includes(name);
  const cases = [];
  const add = (id, messages, withTools) => cases.push({ id, messages, tools: withTools ? TOOLS : null });
  const sys = msg('system', 'You are a concise, friendly assistant.');
  add('prose', [sys, msg('user', PROSE)]);
  add('code', [sys, msg('user', CODE), msg('assistant', CODE_ANSWER), msg('user', 'And the Python version without recursion?')]);
  add('emoji-cjk', [msg('system', 'Réponds en français ou en 中文. 🙂'), msg('user', UNICODE), msg('assistant', UNICODE_ANSWER), msg('user', '谢谢！👍')]);
  add('long-system', [msg('system', longSystem()), msg('user', 'My parcel never arrived; order #A-10442. What now?')]);
  add('multi-turn', [sys, ...MULTI_TURN.map(([r, c]) => msg(r, c))]);
  add('no-system', [msg('user', 'What is the capital of Australia?')]);
  add('no-system-turns', [msg('user', 'Name a prime above 100.'), msg('assistant', '101.'), msg('user', 'And the next one?')]);
  add('whitespace', [sys, msg('user', '  leading spaces, trailing spaces   \n\n\n\tTabbed line\n    indented    words   \n')]);
  // Llama's templates `| trim` each message: Python strips what str.isspace() calls space, JavaScript what String.prototype.trim() does.
  add('unicode-spaces', [sys, msg('user', '\u3000\u00a0 full-width and no-break spaces around \u2003\u00a0'), msg('assistant', '\u2028ok\u2029'), msg('user', '\u0085next line\u0085')]);
  // U+FEFF (a byte order mark, as a pasted file may start with) is no space to Python, but String.prototype.trim() removes it.
  add('byte-order-mark', [msg('user', '\ufeffname,price\nwidget,3\ufeff')]);
  // Special-token strings typed in a message are special tokens to the tokenizer too: pieces() must cut there as the reference counts.
  add('special-tokens-in-content', [sys, msg('user', 'Print the literals <|im_start|>, <|im_end|>, <|eot_id|>, <start_of_turn>, <end_of_turn>, [INST], </s>, <｜User｜> and <think>; thanks.')]);
  if (name === 'deepseek-v3' || coded) add('two-systems', [sys, msg('system', 'Answer in English.'), msg('user', 'Hi!')]);
  if (name === 'qwen3') {
    // Earlier turns' reasoning is dropped; reasoning after the last user query is kept.
    add('thinking', [msg('user', 'What is 17 × 23?'), msg('assistant', '<think>\n17 × 20 = 340, 17 × 3 = 51\n</think>\n\n391'), msg('user', 'And 391 / 17?')]);
  }
  if (!tools) return cases;

  const idOf = (i) => (source.toolCallIdLength ? ['a1B2c3D4e', 'Z9y8X7w6v'][i] : ['call_0001', 'call_0002'][i]);
  const call = (i, fn, args) => ({ id: idOf(i), type: 'function', function: { name: fn, arguments: source.argumentsAs === 'string' ? JSON.stringify(args) : args } });
  const result = (i, content) => ({ role: 'tool', tool_call_id: idOf(i), content });
  // Qwen3's template reads `'</think>' in message.content`, which Python cannot do on None: a tool-calling turn there says ''.
  const callContent = name === 'qwen3' ? '' : null;
  const weather = { city: 'São Paulo', units: 'metric' };
  add('tools-defined', [sys, msg('user', 'What is the weather in São Paulo?')], true);
  add('tools-no-system', [msg('user', 'Find the manual page about resetting the router.')], true);
  add(
    'tool-call',
    [
      sys,
      msg('user', 'What is the weather in São Paulo?'),
      { role: 'assistant', content: callContent, tool_calls: [call(0, 'get_weather', weather)] },
      result(0, '{"temp_c": 23.5, "sky": "partly cloudy ⛅"}'),
      msg('assistant', 'It is 23.5 °C and partly cloudy in São Paulo.'),
      msg('user', 'Thanks. Should I bring an umbrella tomorrow?'),
    ],
    true,
  );
  if (name === 'qwen3') {
    add(
      'thinking-tool-call',
      [
        msg('user', 'Weather in Oslo?'),
        { role: 'assistant', content: '<think>\nI should call get_weather.\n</think>\n\nLet me check.', tool_calls: [call(0, 'get_weather', { city: 'Oslo' })] },
        result(0, 'Oslo: -3 °C, snow'),
      ],
      true,
    );
  }
  if (name === 'mistral-nemo') {
    // The tools go before the last user message, found by equality: Python compares dicts by value.
    add('repeated-user-message', [msg('user', 'Continue.'), msg('assistant', 'Step 1 done.'), msg('user', 'Continue.')], true);
  }
  if (coded) {
    // DeepSeek-V3.2 (deepseek-v32.ts): text beside calls, rounds of calls in one turn, a prompt ending in results or in an
    // assistant's calls, the tools with two system messages, arguments of every JSON kind, and a call with no arguments.
    const sysTools = [sys, msg('system', 'Answer in English.')];
    add(
      'content-and-calls',
      [sys, msg('user', 'Weather in Oslo?'), { role: 'assistant', content: 'Let me check the forecast.', tool_calls: [call(0, 'get_weather', { city: 'Oslo' })] }, result(0, 'Oslo: -3 °C, snow')],
      true,
    );
    add(
      'rounds',
      [
        sys,
        msg('user', 'Compare Oslo and Lima, then find the manual page on storms.'),
        { role: 'assistant', content: '', tool_calls: [call(0, 'get_weather', { city: 'Oslo' })] },
        result(0, 'Oslo: -3 °C, snow'),
        { role: 'assistant', content: 'Now Lima.', tool_calls: [call(1, 'get_weather', { city: 'Lima', units: 'metric' })] },
        result(1, 'Lima: 19 °C, cloudy'),
        { role: 'assistant', content: '', tool_calls: [call(0, 'search_docs', { query: 'storm warnings', limit: 2 })] },
        result(0, '<no results>\n'),
      ],
      true,
    );
    add('ends-in-calls', [sys, msg('user', 'Search for "reset".'), { role: 'assistant', content: '', tool_calls: [call(0, 'search_docs', { query: 'reset' })] }], true);
    add('tools-two-systems', [...sysTools, msg('user', 'Weather in Paris?')], true);
    add(
      'argument-kinds',
      [
        msg('user', 'Every kind of argument.'),
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            call(0, 'search_docs', { query: 'tabs\tand "quotes" \\ 雨 🌧️', limit: 5, ratio: 0.25, big: 1e21, tiny: 1.5e-7, flag: false, none: null, list: [1, 'two', [3.5]], nested: { a: { b: [] }, 'ü': {} } }),
            call(1, 'get_weather', {}),
          ],
        },
        result(0, 'ok'),
        result(1, ''),
        msg('assistant', 'Done.'),
        msg('user', 'Thanks.'),
      ],
      true,
    );
  }
  // The same tool call as ctxsim holds it (a Message: arguments as the model's JSON text, content '' beside the calls),
  // turned into the template's shape by ctxsim's chatMessage in the test, and by render.py as a Python caller would
  // (json.loads of the arguments for templates that want an object; content None beside calls only where the template needs it).
  const viaCtxsim = (id, args) =>
    cases.push({
      id,
      ctxsim: true,
      messages: [
        { role: 'user', content: 'Weather in São Paulo? 🌧️' },
        { role: 'assistant', content: '', toolCalls: [{ id: idOf(0), name: 'get_weather', arguments: args }] },
        { role: 'tool', content: '23 °C, 雨', toolCallId: idOf(0) },
      ],
      tools: TOOLS,
    });
  viaCtxsim('ctxsim-message', '{"city":"São Paulo","units":"metric","note":"🌧️ 雨 <b>&</b>","days":[1,2,3],"exact":true}');
  // Numbers as Python keeps them and JavaScript does not: a float written with .0 or an exponent, an integer beyond 2^53.
  viaCtxsim('ctxsim-message-numbers', '{"city": "São Paulo", "lat": -23.5, "lon": -46.0, "radius_km": 1e2, "order": 12345678901234567890}');
  if (name !== 'llama3.1') {
    // Llama 3.1's template allows one call per assistant message.
    add(
      'parallel-tool-calls',
      [
        ...(alternating ? [] : [sys]),
        msg('user', 'Weather in Oslo, and search the manual for "firmware update".'),
        { role: 'assistant', content: callContent, tool_calls: [call(0, 'get_weather', { city: 'Oslo' }), call(1, 'search_docs', { query: 'firmware update', limit: 3 })] },
        result(0, 'Oslo: -3 °C, snow'),
        result(1, '[{"title": "Updating firmware", "page": 42}]'),
      ],
      true,
    );
  }
  return cases;
}

/** Plain texts, a few hundred: hand-written kinds, then seeded mixtures of them. */
function texts() {
  const base = [
    '', ' ', '  ', '\n', '\n\n', '\t', ' \n ', 'a', 'A', 'hello', ' hello', 'Hello, world!', 'HELLO WORLD',
    PROSE, CODE, CODE_ANSWER, UNICODE, UNICODE_ANSWER,
    'The quick brown fox jumps over the lazy dog.',
    "It's a dog's life, isn't it? They'll say we'd've known.",
    'supercalifragilisticexpialidocious antidisestablishmentarianism',
    'e-mail: jane.doe+test@example.co.uk, URL: https://example.com/a/b?c=1&d=%20x#frag',
    '0', '7', '42', '123', '1234', '12345', '123456789', '3.14159265358979', '-0.000001', '1e10', '6.022e23',
    '1,234,567.89', '2024-12-01T13:45:00Z', '+1 (555) 010-9999', '0xDEADBEEF', '0b101010', '192.168.0.1',
    '$19.99', '€1.234,56', '¥10000', '100%', '½ ¾ ⅓', '∑ x² ≤ ∞', 'α β γ δ ε', 'H₂O CO₂',
    'café', 'naïve', 'résumé', 'Ångström', 'Straße', 'façade', 'jalapeño', 'Zürich', 'Łódź', 'Dvořák', 'İstanbul',
    'e\u0301', 'cafe\u0301', 'Å', 'A\u030a', 'ﬁ ligature', 'ｆｕｌｌ　ｗｉｄｔｈ', 'Ⅻ', '①②③',
    '你好', '你好，世界！', '中华人民共和国', '日本語のテキスト', 'カタカナ', 'ひらがな', '한국어', '안녕하세요',
    'Русский язык', 'Ελληνικά', 'العربية', 'עברית', 'हिन्दी', 'ไทย', 'Tiếng Việt', 'ქართული', 'Հայերեն',
    '😀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '❤️', '🇫🇷', '🇯🇵🇺🇸', '🎉🎉🎉', '🙂 ok', 'x😀y',
    '<|im_start|>', '<|im_end|>', '<|endoftext|>', '<|begin_of_text|>', '<|eot_id|>', '<|start_header_id|>user<|end_header_id|>',
    '<s>', '</s>', '[INST]', '[/INST]', '[TOOL_CALLS]', '<start_of_turn>user', '<end_of_turn>', '<bos>',
    '<｜User｜>', '<｜Assistant｜>', '<｜begin▁of▁sentence｜>', '<think>', '</think>', '<tool_call>', '<|python_tag|>',
    'Say <|im_end|> twice: <|im_end|><|im_end|>', 'text [INST] inside [/INST] text', 'a<s>b</s>c', '<think>\nhmm\n</think>\n\nAnswer',
    '<|im_start', 'im_end|>', '<|eot_id', '< s >',
    '    ', '        ', '\t\t\t', '\n\n\n\n', ' \t \n', 'a   b', 'a\t\tb', 'line1\r\nline2', 'trailing   ', '   leading',
    '{"key": "value", "n": [1, 2, 3], "nested": {"ok": true, "nil": null}}',
    '<div class="x">Hello &amp; welcome</div>', 'SELECT id, name FROM users WHERE age > 30 ORDER BY name;',
    'for (let i = 0; i < 10; i++) { console.log(i); }', 'def f(x):\n    return x ** 2\n', '#include <stdio.h>\nint main(void) { return 0; }',
    '// comment\n/* block */', '$ npm i --save-dev vitest && npx vitest run', 'a == b != c <= d >= e => f -> g', '!!!???...,,,;;;', '____----====',
    '»quoted« „German“ “curly” ‘single’', '…—–', '© ® ™ § ¶ † ‡', '\u00a0non-breaking\u00a0space', 'zero\u200bwidth', 'soft\u00adhyphen',
    'mixed 中文 and English 混合 text', 'Emoji 🚀 in the middle', 'مرحبا hello שלום', 'Ünïcödé wörds everywhere', 'ALLCAPS lowercase MiXeD',
  ];
  const words = base.filter((t) => t.length > 0 && t.length < 60);
  const next = random(19);
  const pick = (xs) => xs[Math.floor(next() * xs.length)];
  const seps = [' ', '', '\n', '  ', '\t', ', ', '. ', '\n\n', ' — '];
  const out = [...base];
  for (const n of [1, 2, 3, 5, 8, 16, 31, 64]) out.push(' '.repeat(n), '\n'.repeat(n), `x${' '.repeat(n)}y`, `${'a'.repeat(n)}`, `${'9'.repeat(n)}`);
  while (out.length < 320) {
    const parts = [];
    const n = 2 + Math.floor(next() * 6);
    for (let i = 0; i < n; i++) parts.push(pick(words), pick(seps));
    out.push(parts.join(''));
  }
  return [...new Set(out)];
}

const families = {};
for (const [name, source] of Object.entries(OPEN_WEIGHTS)) {
  const files = {
    tokenizer: source.tokenizer,
    ...(source.config && { config: source.config }),
    template: source.template,
    ...(source.format && { format: source.format, bos: source.bos, eos: source.eos }),
    ...(source.addedTokens && { addedTokens: source.addedTokens }),
  };
  families[name] = { source: files, argumentsAs: source.argumentsAs, cases: casesFor(name, source), texts: texts() };
}
process.stdout.write(`${JSON.stringify({ families }, null, 1)}\n`);
