#!/usr/bin/env node
/**
 * Step 3 of the reference token counts (see README.md): counts the prompts
 * render.py rendered, and the plain texts, with Hugging Face's native
 * `tokenizers` (the Rust core the Python package wraps, here through its
 * official Node binding), add_special_tokens false, no truncation or padding,
 * as transformers' apply_chat_template(tokenize=True) does; writes
 * test/fixtures/tokens/open-weights/<name>.json (rendered prompts as SHA-256
 * only).
 *
 *   npm i --no-save tokenizers@0.23.2
 *   node scripts/reference-tokens/count.mjs "$W/rendered.json"
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKENIZERS = '0.23.2';
const require = createRequire(import.meta.url);
const version = JSON.parse(readFileSync(join(ROOT, 'node_modules/tokenizers/package.json'), 'utf8')).version;
if (version !== TOKENIZERS) throw new Error(`tokenizers is at ${version}; run npm i --no-save tokenizers@${TOKENIZERS}`);
const { Tokenizer } = require('tokenizers');

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const outDir = join(ROOT, 'test/fixtures/tokens/open-weights');
mkdirSync(outDir, { recursive: true });

for (const [name, family] of Object.entries(input.families)) {
  // Mistral's v3 SentencePiece tokenizer has no tokenizer.json: its reference is Mistral's own (mistral_common.py).
  if (family.source.format) continue;
  const path = join(ROOT, family.tokenizerPath);
  if (sha256(readFileSync(path)) !== family.source.tokenizer.sha256) throw new Error(`${path} is not the pinned tokenizer`);
  const tokenizer = Tokenizer.fromFile(path);
  tokenizer.disableTruncation();
  tokenizer.disablePadding();
  const count = async (text) => (await tokenizer.encode(text, null, { addSpecialTokens: false })).getIds().length;
  const cases = [];
  for (const c of family.cases) cases.push({ id: c.id, ...(c.ctxsim && { ctxsim: true }), messages: c.messages, tools: c.tools, renderedSha256: sha256(c.rendered), tokens: await count(c.rendered) });
  const texts = [];
  for (const t of family.texts) texts.push([t, await count(t)]);
  const head = {
    generatedBy: 'scripts/reference-tokens (cases.mjs, render.py, count.mjs): do not edit, regenerate as its README.md says',
    name,
    files: family.source,
    generator: { renderer: `Python Jinja2 ${input.jinja2}, transformers' chat template environment`, tokenizer: `Hugging Face tokenizers ${TOKENIZERS} (Rust core, npm binding), add_special_tokens false` },
  };
  const lines = JSON.stringify(head, null, 1).slice(0, -2).split('\n');
  lines.push(',', ' "cases": [', cases.map((c) => `  ${JSON.stringify(c)}`).join(',\n'), ' ],', ' "texts": [', texts.map((t) => `  ${JSON.stringify(t)}`).join(',\n'), ' ]', '}');
  writeFileSync(join(outDir, `${name}.json`), `${lines.join('\n').replace('\n,\n', ',\n')}\n`);
  console.log(`${name}: ${cases.length} conversations, ${texts.length} texts`);
}
