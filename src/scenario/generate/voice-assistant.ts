import { z } from 'zod';
import type { ToolOut, TurnOut } from '../docs.js';
import { CLOCK_TIMES, fullName, userSlug, WEEKDAYS } from './lexicon.js';
import { commonOverrides, share, type CommonProfileParams, type Profile } from './profile.js';
import { compose, expand, targetWords, type Slots } from './text.js';

/** Voice-assistant profile parameters. */
export interface VoiceParams extends CommonProfileParams {
  /** Chance that a turn refers back to the item created just before. */
  backReferenceShare: number;
}

const TASKS = [
  'renew the car insurance', 'pick up the dry cleaning', 'call the dentist about the crown', 'water the balcony plants',
  'send the invoice to Harlow Design', 'buy a birthday card for Grandma', 'return the library books', 'book the MOT for the van',
  'cancel the gym trial', 'order more printer ink', 'pay the electricity bill', 'email the landlord about the boiler',
  'take the recycling out', 'refill the cat prescription', 'transfer rent to the joint account', 'charge the camera batteries',
];
const MEMOS = [
  'the garage door code is 4471', 'the cabin wifi password is bluefinch42', 'Ana lands at 6:40 on terminal 2',
  'the plumber recommended replacing the valve under the sink', 'locker number 318 at the pool', 'parking spot is level 3 row F',
  'gift idea for Tom is the green hiking flask', 'the bike lock combination is 2209', 'Dr Osei said to retest in six weeks',
  'the spare key is with Mrs Patel at number 12',
];
const EVENTS = [
  'dinner with Marco', 'quarterly review with the Lisbon team', 'parent evening at Hillside School', 'haircut at Studio Nine',
  'physio session', 'call with the mortgage adviser', 'pottery class', 'team offsite planning', 'vet appointment for Pepper',
  'coffee with Jun', 'car service at Brooks Motors', 'book club at the Crown',
];
const WHEN = ['tomorrow at {time}', 'on {weekday} at {time}', 'tonight', 'in two hours', 'next {weekday} morning', 'this afternoon', 'on {weekday}'];

const SLOTS: Slots = { time: CLOCK_TIMES, weekday: WEEKDAYS, when: WHEN };

const USER_FILLERS = [
  '[Please|Thanks].', "[I keep|I'll probably] forget otherwise.", "It's [important|kind of urgent].", 'That would be [great|perfect].',
  '[Um|Oh], [also|and] make it [loud|a proper alert].', "[I'm driving|My hands are full|I'm cooking] right now.", 'Same as last time.',
  '[Hmm|Okay|Right], [let me think|where was I].', 'For [work|home|the kids], not the shared list.', "Don't let me [skip|snooze] it.",
];
const ASSISTANT_FILLERS = [
  'Anything else?', "You'll get a notification [ten|fifteen|five] minutes before.", 'I have synced it to your [phone|watch].', 'It is in your [personal|home|work] list.',
  'Just say "show my list" to see everything.', 'I can also set a reminder the day before if you like.', 'You have [two|three|four] other items [today|tomorrow].',
  '[I will|I can] read it out again [later|whenever you ask].',
];

interface Item {
  kind: 'task' | 'memo' | 'event';
  fact: string;
  value: string;
  id: string;
  /** When a task is due, so a change moves it somewhere else. */
  due?: string;
}

interface Step {
  user: string;
  assistant: string;
  tools?: ToolOut[];
  facts?: Record<string, string>;
  probe?: string[];
}

/**
 * Voice assistant: short spoken commands that create tasks, memos and
 * calendar events through tool calls, then refer back to them ("move that
 * to Friday", "what was that memo?"). Each item's title is a fact, stated in
 * the command that creates it and probed by the turns that refer to it.
 */
export const voiceAssistant: Profile<VoiceParams> = {
  id: 'voice-assistant',
  describe: 'spoken task/memo/calendar commands with tool calls and references back to what was just created',
  defaults: { turns: [3, 15], userWords: 9, assistantWords: 12, spread: 0.5, backReferenceShare: 0.45 },
  overrides: z.strictObject({ ...commonOverrides, backReferenceShare: share.optional() }),
  build({ id, rng, turns: T, params }) {
    const person = fullName(rng);
    const items: Item[] = [];
    const counts = { task: 0, memo: 0, event: 0 };
    const pools = { task: rng.sample(TASKS, TASKS.length), memo: rng.sample(MEMOS, MEMOS.length), event: rng.sample(EVENTS, EVENTS.length) };
    const create = (kind: Item['kind']): Step => {
      counts[kind]++;
      const n = counts[kind];
      const value = pools[kind][(n - 1) % pools[kind].length]!;
      const item: Item = { kind, fact: n === 1 ? kind : `${kind}-${n}`, value, id: `${kind}_${rng.int(100, 999)}` };
      items.push(item);
      const facts = { [item.fact]: value };
      if (kind === 'task') {
        const when = expand('{when}', rng, SLOTS);
        item.due = when;
        return {
          user: expand('[Remind me to {v} {when}|Add a task to {v}, {when}|Set a reminder to {v} {when}].', rng, { v: value, when }),
          tools: [{ call: 'create_task', args: { title: value, due: when }, result: { id: item.id, status: 'created' } }],
          assistant: expand(`[Okay|Done|Sure], I'll remind you {when}.`, rng, { when }),
          facts,
        };
      }
      if (kind === 'memo') {
        return {
          user: expand('[Take a memo|Make a note|Note this down]: {v}.', rng, { v: value }),
          tools: [{ call: 'create_memo', args: { text: value }, result: { id: item.id, status: 'saved' } }],
          assistant: expand('[Saved|Got it], [the memo is saved|I made a note].', rng, {}),
          facts,
        };
      }
      const day = rng.pick(WEEKDAYS);
      const time = rng.pick(CLOCK_TIMES);
      return {
        user: expand(`[Put|Add|Schedule] {v} [on my calendar|in the calendar] for ${day} at ${time}.`, rng, { v: value }),
        tools: [{ call: 'create_calendar_event', args: { title: value, start: `${day} ${time}` }, result: { id: item.id, status: 'confirmed' } }],
        assistant: expand(`[Done|Okay], it's on ${day} at ${time}.`, rng, {}),
        facts,
      };
    };
    /** A turn that needs the item: the title must still be in context to know what "that" is. */
    const refer = (item: Item, justMade: boolean): Step => {
      if (item.kind === 'task') {
        let when = expand('{when}', rng, SLOTS);
        for (let tries = 0; when === item.due && tries < 5; tries++) when = expand('{when}', rng, SLOTS);
        item.due = when;
        return {
          user: justMade
            ? expand(`[Actually|Wait], [move|push|change] that to {when}.`, rng, { when })
            : expand('[That reminder from earlier|The task I gave you before], can you [move|push] it to {when}?', rng, { when }),
          tools: [{ call: 'update_task', args: { id: item.id, due: when }, result: { id: item.id, status: 'updated' } }],
          assistant: expand(`[Okay|Done], I'll remind you to {v} {when} instead.`, rng, { v: item.value, when }),
          probe: [item.fact],
        };
      }
      if (item.kind === 'memo') {
        return {
          user: justMade ? expand('[Read that back to me|What did I just say]?', rng, {}) : expand('What was [that|the] memo I made [earlier|before]?', rng, {}),
          assistant: expand('[Your memo says|It says]: {v}.', rng, { v: item.value }),
          probe: [item.fact],
        };
      }
      return {
        user: justMade ? expand('[Invite Sam to that too|Add a reminder an hour before it].', rng, {}) : expand("What's that [appointment|event] I added [earlier|before] called?", rng, {}),
        assistant: expand('[Okay|Sure], that is {v}.', rng, { v: item.value }),
        probe: [item.fact],
      };
    };
    const misc = (): Step => ({
      user: expand(rng.pick(["What's the weather [tomorrow|this weekend]?", '[Thanks|Thank you|Cheers].', 'How long until [lunch|my next meeting]?', 'Turn the [volume|brightness] down a bit.']), rng, SLOTS),
      assistant: expand(rng.pick(['[Sunny|Cloudy] with a high of [18|21|24] degrees.', "You're welcome.", 'About [forty|twenty] minutes.', 'Done.']), rng, SLOTS),
    });

    const out: TurnOut[] = [];
    let last: Item | undefined;
    let probed = false;
    for (let t = 1; t <= T; t++) {
      let step: Step;
      if (t === T && !probed && items.length) {
        // Every conversation refers back at least once.
        step = refer(last ?? items[0]!, last !== undefined);
      } else if (last && rng.chance(params.backReferenceShare)) {
        step = refer(last, true);
        last = undefined;
      } else if (t === T && items.length > 1 && rng.chance(0.5)) {
        step = refer(items[0]!, false);
      } else if (t > 1 && rng.chance(0.15)) {
        step = misc();
      } else {
        const r = rng.float();
        step = create(r < 0.45 ? 'task' : r < 0.7 ? 'memo' : 'event');
        last = items[items.length - 1];
      }
      if (step.probe) probed = true;
      out.push({
        user: compose(rng, [step.user], USER_FILLERS, SLOTS, targetWords(rng, params.userWords, params.spread), 0.1),
        ...(step.facts && { facts: step.facts }),
        ...(step.probe && { probe: step.probe }),
        ...(step.tools && { tools: step.tools }),
        assistant: compose(rng, [step.assistant], ASSISTANT_FILLERS, SLOTS, targetWords(rng, params.assistantWords, params.spread), 0),
      });
    }
    return {
      id,
      title: 'Voice assistant: tasks, memos and calendar',
      system: `You are a voice assistant for ${person.first}. Keep answers short; use the tools to create and update tasks, memos and calendar events.`,
      user: userSlug(person.full),
      turns: out,
    };
  },
};

