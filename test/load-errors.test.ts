import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { ScenarioError } from '../src/errors.js';
import { dropUnstatedFacts } from '../src/scenario/import/index.js';
import { parseScenario, scenarioFromValue } from '../src/scenario/load.js';
import { capture } from './_io.js';
import { tempDir } from './_tmp.js';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScenarioError) return e.message.split('\n');
    throw e;
  }
  return [];
}

const scenario = (text: string) => problems(() => parseScenario('s.yaml', text));

describe('a fact value must occur in the turn that states it', () => {
  it('is an error at the fact when the turn never says it', () => {
    expect(scenario("id: x\nturns:\n  - user: Hi, I'm Ana\n    facts: {name: Anna}\n")).toEqual([
      's.yaml:4:19 turns[0].facts.name: fact "name": "Anna" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('compares as the scorer does: case and whitespace do not matter', () => {
    expect(scenario("id: x\nturns:\n  - user: \"My code is  AB\\n12\"\n    facts: {code: ab 12}\n")).toEqual([]);
  });

  it('counts the assistant reply, tool arguments and tool results as the turn', () => {
    const text = [
      'id: x',
      'turns:',
      '  - user: book it',
      '    tools:',
      '      - {call: book, args: {room: R-17}, result: {ref: BK-9}}',
      '    assistant: Done, see you Friday',
      '    facts: {room: r-17, ref: BK-9, day: friday}',
      '  - role: user',
      '    content: and the time?',
      '    facts: {time: "10:30"}',
      '  - role: assistant',
      '    content: At 10:30.',
    ].join('\n');
    expect(scenario(text)).toEqual([]);
  });

  it('lists every missing fact, with the one on a chat message at its place', () => {
    const text = ['id: x', 'turns:', '  - user: hi', '    facts: {a: one, b: two}', '  - role: user', '    content: hello', '    facts: {c: three}'].join('\n');
    expect(scenario(text)).toEqual([
      's.yaml:4:16 turns[0].facts.a: fact "a": "one" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
      's.yaml:4:24 turns[0].facts.b: fact "b": "two" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
      's.yaml:7:16 turns[1].facts.c: fact "c": "three" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('a value said only in another turn does not count', () => {
    expect(scenario('id: x\nturns:\n  - user: I am Ana\n  - user: ok\n    facts: {name: Ana}\n')).toEqual([
      's.yaml:5:19 turns[1].facts.name: fact "name": "Ana" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('holds for documents built in memory too (no line)', () => {
    expect(problems(() => scenarioFromValue('gen#x', { id: 'x', turns: [{ user: 'hi', facts: { n: 'Anna' } }] }))).toEqual([
      'gen#x turns[0].facts.n: fact "n": "Anna" occurs nowhere in this turn (user message, tool calls and results, assistant reply)',
    ]);
  });

  it('an importer drops such a fact, and the probes and forgets that named only it, as a quirk', () => {
    const docs = [
      {
        id: 'd',
        turns: [
          { user: "I'm Ana, order 42", facts: { name: 'Anna', order: '42' } },
          { forget: ['name', 'order'] },
          { user: 'who am I?', probe: ['name', 'order'] },
        ],
      },
    ];
    expect(dropUnstatedFacts(docs)).toEqual([
      { key: 'fact-not-in-turn', label: 'facts whose value their turn does not contain (dropped)', count: 1, examples: ['d name'] },
      { key: 'probe-of-dropped-fact', label: 'probes of dropped facts (skipped)', count: 1, examples: ['d name'] },
    ]);
    expect(docs[0]!.turns).toEqual([{ user: "I'm Ana, order 42", facts: { order: '42' } }, { forget: ['order'] }, { user: 'who am I?', probe: ['order'] }]);
    expect(problems(() => scenarioFromValue('d', docs[0]))).toEqual([]);
  });

  it('ctxsim run exits 2 with the fact\'s place', async () => {
    const dir = tempDir();
    const file = join(dir, 's.yaml');
    writeFileSync(file, "id: x\nturns:\n  - user: Hi, I'm Ana\n    facts: {name: Anna}\n");
    const io = capture();
    expect(await runMain(['run', '--scenario', file, '--out', '-', '--no-token-cache', '--quiet'], io)).toBe(2);
    expect(io.stderr).toContain(':4:19 turns[0].facts.name: fact "name": "Anna" occurs nowhere in this turn');
  });
});

describe('every model a study names is checked at load, at its place', () => {
  async function runStudy(text: string): Promise<{ code: number; lines: string[] }> {
    const dir = tempDir();
    writeFileSync(join(dir, 's.yaml'), 'id: s\nturns:\n  - user: hi\n');
    writeFileSync(join(dir, 'study.yaml'), text);
    const io = capture();
    const code = await runMain(['run', join(dir, 'study.yaml'), '--out', '-', '--no-token-cache', '--quiet'], io);
    return { code, lines: io.stderr.replaceAll(join(dir, 'study.yaml'), 'study.yaml').split('\n').filter(Boolean) };
  }

  it('chat, routed, fallback and upkeep models, even when no call would use them', async () => {
    const text = [
      'scenarios: [s.yaml]',
      'model: gpt-4o-minii',
      'route: {light: gpt-4o-mini, strong: nope-1, strongWhen: {userTokensOver: 1000000}}',
      'fallback: {model: nope-2, rate: 0}',
      'policies:',
      '  - full',
      '  - summary:summaryModel=nope-3',
      '  - facts: {extractModel: nope-4}',
      '  - retrieval: {embedModel: nope-5}',
    ].join('\n');
    const { code, lines } = await runStudy(text);
    expect(code).toBe(2);
    expect(lines.map((l) => l.replace(/ \(closest: .*\)$/, ''))).toEqual([
      'ctxsim: study.yaml:2:8 model: unknown model "gpt-4o-minii"',
      'ctxsim: study.yaml:3:37 route.strong: unknown model "nope-1"',
      'ctxsim: study.yaml:4:19 fallback.model: unknown model "nope-2"',
      'ctxsim: study.yaml:7:5 policies[1]: unknown model "nope-3"',
      'ctxsim: study.yaml:8:27 policies[2].facts.extractModel: unknown model "nope-4"',
      'ctxsim: study.yaml:9:29 policies[3].retrieval.embedModel: unknown model "nope-5"',
    ]);
    expect(lines[0]).toBe('ctxsim: study.yaml:2:8 model: unknown model "gpt-4o-minii" (closest: gpt-4o-mini, gpt-4.1-mini, gpt-5-mini)');
  });

  it('a prices file that cannot be read is named at the study\'s prices key', async () => {
    const { code, lines } = await runStudy('scenarios: [s.yaml]\nprices: missing.json\n');
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^ctxsim: study\.yaml:2:9 prices: price table .*missing\.json: cannot read price table \(ENOENT\)$/);
  });
});
