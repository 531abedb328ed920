import { z } from 'zod';
import type { TurnOut } from '../docs.js';
import { codeBlock, LANGUAGES } from './code.js';
import { fullName, userSlug } from './lexicon.js';
import { commonOverrides, share, type CommonProfileParams, type Profile } from './profile.js';
import { compose, expand, targetWords, type Slots } from './text.js';

/** Coding profile parameters. */
export interface CodingParams extends CommonProfileParams {
  /** Share of assistant replies that carry a code block. */
  codeShare: number;
  /** Share of user messages that paste code. */
  pasteShare: number;
  /** Median lines of a code block. */
  codeLines: number;
}

const PROJECTS = ['billing service', 'internal dashboard', 'mobile backend', 'data import job', 'booking API', 'chat bot', 'inventory tool', 'webhook relay'];

const SLOTS: Slots = {
  thing: ['the handler', 'this function', 'the retry logic', 'the parser', 'the cache layer', 'the migration', 'the worker', 'the test'],
  symptom: [
    'it returns undefined on the second call', 'the tests hang in CI', 'memory keeps growing', 'it throws on empty input',
    'the response is sometimes stale', 'it is slow with more than a thousand rows', 'the types do not line up', 'it logs the same event twice',
  ],
  project: PROJECTS,
};

const USER_ASKS = [
  'Can you help me fix {thing}? {symptom}.',
  'Why does {thing} break? {symptom}.',
  'How should I structure {thing} so it is easier to test?',
  'Could you review {thing} below?',
  'That works, thanks. Now {symptom} in production though.',
  'What would be a cleaner way to write {thing}?',
  'Can you add error handling to {thing}?',
  'Could you write unit tests for {thing}?',
  'Is there a way to make {thing} run in parallel?',
  'I changed it as you said but {symptom}.',
];

const USER_FILLERS = [
  'I am on a deadline for [Friday|the end of the sprint|tomorrow morning|the demo next week].',
  'The tests pass locally but [fail|are flaky|time out] in CI.',
  'I already tried [restarting the dev server|clearing the cache|pinning the dependency|reading the changelog].',
  'We deploy with Docker on a [small VM|managed cluster|single box under a desk].',
  'The logs do not show anything [useful|obvious|beyond a generic 500].',
  'This code was written by someone who left the team, so I do not know all the reasons behind it.',
  'It only happens [under load|on Mondays after the batch job|with large files|for some users].',
  'I would rather not add another dependency if we can avoid it.',
  'Performance matters here because it runs on every [request|message|page view].',
  'Here is the relevant part, the rest is boilerplate.',
  'My [lead|reviewer|team mate] thinks we should [rewrite it|leave it alone|add a queue], but I am not sure.',
  'The [staging|production] database has about [two million|forty thousand|half a billion] rows.',
  'I am still fairly new to this codebase.',
  '[Last week|Yesterday] we shipped a change to {thing} and this started right after.',
  'I added some logging and the [timestamps|ids|counts] look wrong.',
  'We have a code review at [three|noon|the end of the day], so I want it tidy.',
  'There is no test coverage around this part yet.',
  'It is called from [a cron job|two services|the mobile app|a webhook].',
];

const ASSISTANT_OPENERS = [
  'The root cause is that the call is not awaited, so the function returns before the write finishes.',
  'The problem is the shared mutable state: two callers update the same object at once.',
  'This happens because the empty case falls through to the default branch.',
  'A small refactor makes this easier to test: pass the dependency in instead of importing it.',
  'You can keep the public interface and change only the internals.',
  'Good question. There are two reasonable options here, and the simpler one is usually enough.',
  'The slowdown comes from doing one query per row; batching them fixes it.',
  'The [error|bug] comes from comparing ids as strings in one place and numbers in another.',
  'Looking at {thing}, the retry wraps the whole block, so side effects run twice.',
  'The cache key ignores the user, which explains the stale responses.',
];

const ASSISTANT_FILLERS = [
  'Keep the validation at the boundary so the core logic stays simple.',
  'I would also add a test for the [empty|error|timeout] case, since that is where it broke.',
  'If you need it later, the same pattern works for the other handlers.',
  'Note that the timeout is now configurable, with a sensible default.',
  'This version also logs enough context to debug the next failure quickly.',
  'Run the test suite after the change; the behaviour for valid input does not change.',
  'One caveat: this assumes the identifiers are unique, which your schema already guarantees.',
  'You could go further and extract an interface, but that is optional.',
  'Let me know if the error message changes after this, that would point to a second issue.',
  'The key change is on the line with the early return.',
  'Batching the writes [cuts the round trips|keeps the transaction short] as well.',
  'Avoid catching every error here; let unexpected ones reach the top-level handler.',
  'For the [migration|rollout], ship it behind a flag first.',
  'A property-based test would catch the edge cases around empty and huge inputs.',
  '[Naming|Splitting] it this way also makes the stack traces easier to read.',
  'If the [queue|worker|job] restarts halfway, this version resumes without duplicates.',
  'The complexity drops from quadratic to linear because each row is visited once.',
  'I renamed a couple of variables so the intent is clearer; nothing else changed.',
  'You can delete the old helper once nothing imports it.',
  'Measure before and after; on large inputs the difference should be obvious.',
];

interface Plan {
  user: string[];
  assistant: string[];
  facts: Record<string, string>;
  probe: string[];
  header?: string;
}

/**
 * Coding help: the user gives name, language and framework early, then long
 * turns with pasted code and answers with code blocks; later turns need the
 * stack or the name ("wire this into our router", "add me as the author").
 */
export const coding: Profile<CodingParams> = {
  id: 'coding',
  describe: 'long coding-help turns with code blocks; name, language and framework stated early',
  defaults: { turns: [10, 60], userWords: 30, assistantWords: 60, spread: 0.7, codeShare: 0.7, pasteShare: 0.35, codeLines: 10 },
  overrides: z.strictObject({ ...commonOverrides, codeShare: share.optional(), pasteShare: share.optional(), codeLines: z.number().int().min(3).optional() }),
  build({ id, rng, turns: T, params }) {
    const person = fullName(rng);
    const lang = rng.pick(LANGUAGES);
    const framework = rng.pick(lang.frameworks);
    const project = rng.pick(PROJECTS);
    const values: Record<string, string> = { name: person.full, language: lang.name, framework };
    const plans: Plan[] = Array.from({ length: T }, () => ({ user: [], assistant: [], facts: {}, probe: [] }));
    const at = (turn: number) => plans[turn - 1]!;
    const early = Math.min(3, T);
    const stated = { name: rng.chance(0.7) ? 1 : rng.int(1, early), language: 1, framework: rng.int(1, early) };

    if (stated.name === 1) at(1).user.push(expand(`[Hi|Hello|Hey], [I'm|this is] {v}.`, rng, { v: values.name! }));
    at(1).user.push(expand(`[I'm working on|I maintain|I'm building] a {language} ${project}.`, rng, { language: lang.name }));
    if (stated.name !== 1) at(stated.name).user.push(expand(`[I'm|My name is] {v}, by the way.`, rng, { v: values.name! }));
    at(stated.framework).user.push(expand(`[It uses|We are on|The stack is] {v}.`, rng, { v: framework }));
    for (const f of ['name', 'language', 'framework'] as const) at(stated[f]).facts[f] = values[f]!;
    at(1).assistant.push(expand('[Happy to help|Sure, let us take a look|Sounds good].', rng, {}));

    // Probes: from 40% of the way on, each asks for something that needs a fact.
    const probeStart = Math.min(T, Math.max(early + 1, Math.ceil(T * 0.4)));
    for (const f of rng.sample(['name', 'language', 'framework'], rng.int(1, 3))) {
      const turn = rng.int(probeStart, T);
      const p = at(turn);
      p.probe.push(f);
      if (f === 'name') {
        p.user.push(expand('[Please add a header comment with my name as the author|Put my name in the author line of the file header].', rng, {}));
        p.assistant.push(expand('[Added the author line|Here it is with the author line].', rng, {}));
        p.header = `Author: ${values.name}`;
      } else if (f === 'framework') {
        p.user.push(expand('[How do I wire this into the router of our framework|How would I register this with the framework we use]?', rng, {}));
        p.assistant.push(expand('[In {v} you register it as a route handler|With {v}, add it where the other routes are registered].', rng, { v: framework }));
      } else {
        p.user.push(expand('[Could you write a helper for the same thing in our language|Which standard library calls would you use for this in our stack]?', rng, {}));
        p.assistant.push(expand('[In {v} the idiomatic way is shown below|Here is the {v} version].', rng, { v: lang.name }));
      }
    }

    const out: TurnOut[] = plans.map((p, i) => {
      if (!p.user.length || (i === 0 && p.user.length === 1)) p.user.push(expand(rng.pick(USER_ASKS), rng, SLOTS));
      if (!p.assistant.length) p.assistant.push(expand(rng.pick(ASSISTANT_OPENERS), rng, SLOTS));
      let user = compose(rng, p.user, USER_FILLERS, SLOTS, targetWords(rng, params.userWords, params.spread), i === 0 ? 0 : 0.2);
      if (rng.chance(params.pasteShare)) user += `\n\n${codeBlock(rng, lang, targetWords(rng, params.codeLines, params.spread, 120))}`;
      let assistant = compose(rng, p.assistant, ASSISTANT_FILLERS, SLOTS, targetWords(rng, params.assistantWords, params.spread), 0);
      if (p.header || rng.chance(params.codeShare)) {
        assistant += `\n\n${codeBlock(rng, lang, targetWords(rng, params.codeLines * 1.3, params.spread, 150), p.header)}`;
        if (rng.chance(0.5)) assistant += `\n\n${rng.pick(ASSISTANT_FILLERS)}`;
      }
      return {
        user,
        ...(Object.keys(p.facts).length && { facts: p.facts }),
        ...(p.probe.length && { probe: p.probe }),
        assistant,
      };
    });
    return {
      id,
      title: `Coding help: ${lang.name} ${project}`,
      system: 'You are a senior software engineer helping a developer. Answer with working code and explain the key change briefly.',
      user: userSlug(person.full),
      turns: out,
    };
  },
};
