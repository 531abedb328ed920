import { z } from 'zod';
import { formatDuration, type TurnOut } from '../docs.js';
import { parseDuration } from '../../text/duration.js';
import { fullName, userSlug } from './lexicon.js';
import { commonOverrides, rangeField, type CommonProfileParams, type Profile } from './profile.js';
import type { Stream } from './stream.js';
import { compose, expand, targetWords, type Slots } from './text.js';

/** Companion profile parameters. */
export interface CompanionParams extends CommonProfileParams {
  /** Turns per session, inclusive range. */
  sessionTurns: readonly [number, number];
  /** Days between sessions, inclusive range (drawn log-uniform). */
  gapDays: readonly [number, number];
  /** Preferences stated per conversation, inclusive range. */
  preferences: readonly [number, number];
  /** A preference is asked about only after this much simulated time (seconds). */
  probeAfter: number;
}

interface Preference {
  fact: string;
  values: readonly string[];
  state: readonly string[];
  ask: readonly string[];
  answer: readonly string[];
}

const PREFERENCES: readonly Preference[] = [
  {
    fact: 'favourite_food',
    values: ['mushroom risotto', 'pho with extra basil', 'lamb tagine', 'paneer butter masala', 'okonomiyaki', 'shakshuka'],
    state: ['[Honestly|Truly], my [all-time favourite|favourite] [meal|dish] is {v}.', 'If I could eat one thing forever it would be {v}.'],
    ask: ["I want to cook something I'll really love this weekend. Any idea?", 'What should I make for my birthday dinner? Something I adore.'],
    answer: ['How about {v}? You told me it is your favourite.', 'Definitely {v}, your favourite.'],
  },
  {
    fact: 'allergy',
    values: ['shellfish', 'sesame', 'hazelnuts', 'kiwi fruit', 'penicillin'],
    state: ["Oh, random fact about me: I'm allergic to {v}, so I always check labels.", 'I have to be careful because of my {v} allergy.'],
    ask: ['I am trying a new restaurant tonight. Anything I should watch out for when ordering?', 'My friend is cooking for me. What should I remind her about?'],
    answer: ['Just remember your {v} allergy and ask the staff.', 'Remind her you are allergic to {v}.'],
  },
  {
    fact: 'pet_name',
    values: ['Biscuit', 'Pepperoni', 'Mochi', 'Juniper', 'Captain Whiskers', 'Dumpling'],
    state: ['My [dog|cat|rabbit] is called {v} and [she|he] is [the best|a total menace].', 'I adopted a [puppy|kitten] last year, {v}.'],
    ask: ["I'm ordering a name tag for my pet. Do you remember the name?", 'Can you help me write a funny caption for a photo of my pet? Use the name.'],
    answer: ['Of course, {v}!', 'Here is one: "{v}, professional nap taker."'],
  },
  {
    fact: 'best_friend',
    values: ['Anneliese', 'Marguerite', 'Rosalind', 'Thandiwe', 'Esperanza', 'Bartholomew'],
    state: ['My best friend {v} [has known me since school|lives two streets away].', 'I was out with {v}, my best friend, [all afternoon|last night].'],
    ask: ["I want to send my best friend a card. What's their name again? My head is a mess today.", 'Who was that best friend I told you about?'],
    answer: ['Your best friend is {v}.', 'That would be {v}.'],
  },
  {
    fact: 'favourite_band',
    values: ['Khruangbin', 'Fleetwood Mac', 'Bonobo', 'Nina Simone', 'Tame Impala', 'Buena Vista Social Club'],
    state: ['I have been listening to {v} nonstop, [they are|that is] my favourite.', 'Nothing beats {v} on a long drive.'],
    ask: ['Can you recommend music for a road trip, based on what I like?', 'What was the music I told you I love?'],
    answer: ['Start with {v}, your favourite, and then similar artists.', 'You love {v}.'],
  },
  {
    fact: 'hometown',
    values: ['Valparaíso', 'Cork', 'Mysuru', 'Tromsø', 'Bendigo', 'Asheville'],
    state: ['I grew up in {v}, [so the weather here still surprises me|and I miss it sometimes].', 'Back home in {v} we used to [walk everywhere|have huge family dinners].'],
    ask: ['I might visit where I grew up next month. Do you remember where that is?', 'Where did I say I was from again?'],
    answer: ['You grew up in {v}.', '{v}, if I remember right.'],
  },
  {
    fact: 'coffee_order',
    values: ['oat flat white', 'double espresso with a splash of milk', 'iced cortado', 'cardamom latte'],
    state: ['My usual coffee order is {v}, [nothing else works|every single morning].', "I can't start the day without my {v}."],
    ask: ["I'm ordering coffee for myself on the way in. What do I usually get?", 'Remind me what my usual coffee is?'],
    answer: ['Your usual: {v}.', 'You always get {v}.'],
  },
  {
    fact: 'hobby',
    values: ['bouldering', 'watercolour painting', 'sourdough baking', 'birdwatching', 'salsa dancing'],
    state: ['These days my favourite hobby is {v}.', 'I have been really into {v} lately.'],
    ask: ['I have a free Saturday. Any idea that fits what I like doing?', 'What was the hobby I told you I am into?'],
    answer: ['A morning of {v} sounds perfect for you.', 'You are into {v}.'],
  },
];

const SLOTS: Slots = {
  day: ['day', 'morning', 'evening', 'week', 'afternoon'],
  mood: ['tired', 'pretty good', 'a bit low', 'restless', 'calm', 'excited', 'drained', 'hopeful', 'on edge'],
  show: ['a documentary about octopuses', 'an old detective series', 'a cooking competition', 'a sci-fi film', 'a baking show', 'a travel vlog'],
  work: ['a deadline', 'a long meeting', 'a tricky project', 'a new colleague', 'an annoying printer', 'a budget review', 'the quarterly report'],
  person: ['my mum', 'my brother', 'an old classmate', 'my manager', 'the barista', 'my cousin', 'a stranger on the bus'],
  place: ['the park', 'the market', 'the library', 'the river', 'a new café', 'the gym', 'the hardware store'],
  thing: ['a plant', 'new headphones', 'a second-hand armchair', 'a notebook', 'running socks', 'a jigsaw puzzle'],
};

const USER_LINES = [
  'Today was [long|strange|actually lovely|a blur]. I feel {mood}.',
  'Work was mostly about {work}, nothing exciting.',
  'I watched {show} last night and [could not stop|fell asleep halfway].',
  'The weather [turned cold|was gorgeous|kept changing] all {day}.',
  'I finally [cleaned the kitchen|called my parents|went for a run|fixed the shelf|answered my emails].',
  'Do you ever think about how fast the year is going?',
  "I'm trying to sleep earlier but it [is not working|works maybe one night in three].",
  'I read a few chapters of a [mystery novel|biography|poetry book] on the [train|bus|sofa].',
  'Someone at {place} was [really kind|so rude|oddly chatty] to me today.',
  'I am thinking about [changing jobs|taking a class|redecorating|learning to swim properly].',
  'My neighbour is [renovating|practising the trumpet|hosting a party] again.',
  'I made a to-do list and did exactly one thing on it.',
  'I had a long chat with {person} and it [cheered me up|left me thinking|went better than expected].',
  'I walked to {place} [after work|before breakfast|in the rain] just to clear my head.',
  'I bought {thing} on a whim and [I love it|I already regret it].',
  'There was a [huge queue|power cut|fire drill] at work, so nothing got done.',
  'I [burnt|nearly burnt|actually nailed] dinner tonight.',
  'My phone died halfway through the {day}, which was [weirdly freeing|a nightmare].',
  'I keep meaning to [start journaling|stretch in the mornings|call {person}] and then I forget.',
  'The [train|bus] was [late|packed|cancelled] again, I swear it is every {day}.',
];

const USER_FILLERS = [
  ...USER_LINES,
  'Anyway.', 'Sorry, I am rambling.', 'It is nice to have someone to tell.', 'I do not know why that stuck with me.',
  'Maybe I am overthinking it.', 'It was one of those {day}s.', 'Not a big deal, just on my mind.', 'I should probably [go to bed|eat something] soon.',
];

const ASSISTANT_LINES = [
  'That sounds like a [full|big|meaningful|demanding] {day}.',
  'I am [glad|really glad] you told me about it.',
  'How did that make you feel?',
  'It makes sense that you feel {mood} after that.',
  'Small wins count, and that is one.',
  'What would make tomorrow a little easier?',
  '[Oh no|Ugh|Oof], that [sounds frustrating|would annoy me too|is a lot to deal with].',
  '[That is lovely|How nice|I love hearing that]. What was the best part?',
];

const ASSISTANT_FILLERS = [
  ...ASSISTANT_LINES,
  "I am here whenever you want to talk.",
  'Be [gentle|kind] with yourself [tonight|this week].',
  '[That is worth celebrating|You should be proud of that], even if it feels small.',
  'Tell me more if you [like|feel up to it].',
  'A [short|slow] walk to {place} might help clear your head.',
  'It sounds like you handled it [well|better than you think].',
  'Rest is productive too, [especially|particularly] after a {day} like that.',
  'Have you [talked to|mentioned it to] {person}? They might get it.',
  'Sometimes the [plan|list] can wait until tomorrow.',
  'I wonder if {thing} will turn out to be [a good call|a great purchase].',
  'It is completely normal to feel {mood} after {work}.',
  'You mentioned [sleep|rest] before; is that still [hard|tricky]?',
  'What is one thing you are looking forward to this week?',
  '[If it helps|For what it is worth], most people find evenings like that [draining|hard].',
  'Let us see how tomorrow goes.',
];

const GREETINGS = ["Hey, it's me again!", 'Good morning!', 'Hi, long time no talk.', 'Hello again.', 'Evening! Got a minute?'];

/**
 * A long companion chat over many sessions days apart: the user mentions
 * preferences once, early, and asks about them weeks of simulated time later.
 */
export const companion: Profile<CompanionParams> = {
  id: 'companion',
  describe: 'long personal chats over many sessions days apart; preferences stated once and asked weeks later',
  defaults: { turns: [50, 300], userWords: 22, assistantWords: 30, spread: 0.6, sessionTurns: [4, 15], gapDays: [1, 10], preferences: [4, 7], probeAfter: 14 * 86400 },
  overrides: z.strictObject({
    ...commonOverrides,
    sessionTurns: rangeField(1).optional(),
    gapDays: rangeField(1).optional(),
    preferences: rangeField(1).optional(),
    probeAfter: z
      .union([z.string(), z.number()])
      .refine((v) => parseDuration(v) !== undefined, { message: 'expected a duration such as 14d' })
      .transform((v) => parseDuration(v)!)
      .optional(),
  }),
  build({ id, rng, turns: T, params }) {
    const person = fullName(rng);
    // Sessions: sizes from sessionTurns; each later session starts days after the previous one.
    const sessionOf: number[] = [];
    const gaps: number[] = [];
    let session = 0;
    while (sessionOf.length < T) {
      const size = Math.min(T - sessionOf.length, rng.int(params.sessionTurns[0], params.sessionTurns[1]));
      for (let k = 0; k < size; k++) {
        sessionOf.push(session);
        gaps.push(k === 0 ? (session === 0 ? 30 : sessionGap(rng, params.gapDays)) : rng.int(20, 240));
      }
      session++;
    }
    const time = (() => {
      const t: number[] = [];
      gaps.forEach((g, i) => t.push((i ? t[i - 1]! : 0) + (i ? g : 0)));
      return t;
    })();
    // Preferences must be askable later: stretch the last gap if the chat spans too little time.
    const firstLate = (from: number) => time.findIndex((x) => x >= time[from]! + params.probeAfter);
    const prefs = rng.sample(PREFERENCES, rng.int(params.preferences[0], params.preferences[1]));
    const statedBy = Math.max(1, Math.floor(T / 3));
    if (firstLate(statedBy - 1) < 0 && T > statedBy) {
      const lastStart = sessionOf.indexOf(sessionOf[T - 1]!);
      const at = lastStart >= statedBy ? lastStart : statedBy;
      const need = time[statedBy - 1]! + params.probeAfter - time[at]!;
      gaps[at]! += need;
      for (let i = at; i < T; i++) time[i]! += need;
    }

    const user: string[][] = Array.from({ length: T }, () => []);
    const assistant: string[][] = Array.from({ length: T }, () => []);
    const facts: Record<string, string>[] = Array.from({ length: T }, () => ({}));
    const probe: string[][] = Array.from({ length: T }, () => []);
    const used = new Set<number>();
    for (const pref of prefs) {
      const v = rng.pick(pref.values);
      let when = rng.int(0, statedBy - 1);
      for (let tries = 0; used.has(when) && tries < 5; tries++) when = rng.int(0, statedBy - 1);
      used.add(when);
      user[when]!.push(expand(rng.pick(pref.state), rng, { v }));
      assistant[when]!.push(expand('[Noted|Good to know|Thanks for telling me]!', rng, {}));
      facts[when]![pref.fact] = v;
      const late = firstLate(when);
      if (late < 0) continue;
      const ask = rng.int(late, T - 1);
      user[ask]!.push(expand(rng.pick(pref.ask), rng, {}));
      assistant[ask]!.push(expand(rng.pick(pref.answer), rng, { v }));
      probe[ask]!.push(pref.fact);
    }

    const out: TurnOut[] = [];
    for (let i = 0; i < T; i++) {
      const opens = i === 0 || sessionOf[i] !== sessionOf[i - 1];
      const core = [...(opens ? [rng.pick(GREETINGS)] : []), ...(user[i]!.length ? user[i]! : [expand(rng.pick(USER_LINES), rng, SLOTS)])];
      const reply = [...(opens && i > 0 ? [expand('[Welcome back|Hi again|So good to hear from you], ' + person.first + '!', rng, {})] : []), ...(assistant[i]!.length ? assistant[i]! : [expand(rng.pick(ASSISTANT_LINES), rng, SLOTS)])];
      out.push({
        user: compose(rng, core, USER_FILLERS, SLOTS, targetWords(rng, params.userWords, params.spread), 0),
        ...(i > 0 && { gap: formatDuration(gaps[i]!) }),
        ...(Object.keys(facts[i]!).length && { facts: facts[i]! }),
        ...(probe[i]!.length && { probe: probe[i]! }),
        assistant: compose(rng, reply, ASSISTANT_FILLERS, SLOTS, targetWords(rng, params.assistantWords, params.spread), 0),
      });
    }
    return {
      id,
      title: `Companion chat over ${session} sessions`,
      system: `You are a warm, attentive companion. Remember what ${person.first} tells you and bring it up when it helps.`,
      user: userSlug(person.full),
      turns: out,
    };
  },
};

/** Days between sessions, log-uniform in the range, plus a few hours so sessions start at different times. */
function sessionGap(rng: Stream, [lo, hi]: readonly [number, number]): number {
  const days = Math.exp(Math.log(lo) + rng.float() * (Math.log(hi + 1) - Math.log(lo)));
  return Math.floor(days) * 86400 + rng.int(0, 23) * 3600;
}
