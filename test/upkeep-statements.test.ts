import { describe, expect, it, vi } from 'vitest';
import type { Message } from '../src/types.js';
import fc from 'fast-check';
import type { Kept, ReadingStore } from '../src/upkeep/readings.js';
import { Restatements, salienceOf, sameFact, statementsIn, statementsOf, type Voices } from '../src/upkeep/statements.js';

/** What `text` states, as written. */
const said = (text: string, voices: Voices = CAROLINE, today?: number) => statementsOf(text, voices, today).map((s) => s.text);
const CAROLINE: Voices = { speaker: 'Caroline', listener: 'Melanie' };
const USER: Voices = { speaker: 'the user', listener: 'the assistant' };
const MAY_8 = Date.UTC(2023, 4, 8) / 86_400_000;

describe('statements: third person', () => {
  it('writes I, my, me by the speaker’s name and you, your by the listener’s', () => {
    expect(said('You told me your sister lives in Paris.')).toEqual(["Melanie told Caroline Melanie's sister lives in Paris."]);
    expect(said('I have a dog and my dog is called Rex.')).toEqual(["Caroline has a dog and Caroline's dog is called Rex."]);
  });

  it('writes them as the user and the assistant when they have no name', () => {
    expect(said("I'm allergic to peanuts.", USER)).toEqual(['The user is allergic to peanuts.']);
    expect(said('Your order SE-10423 ships today.', { speaker: 'the assistant', listener: 'the user' })).toEqual(['The user’s order SE-10423 ships today.']);
    expect(said("You've been a great help with my garden plan.", USER)).toEqual(['The assistant has been a great help with the user’s garden plan.']);
  });
});

describe('statements: as a note writes them', () => {
  const JON: Voices = { speaker: 'Jon', listener: 'Gina' };

  it('writes a verb said in the present in the third person, where I or you is its subject', () => {
    expect(said('If I keep pushing, I will reach my dreams and do what I love.', JON)).toEqual(["If Jon keeps pushing, Jon will reach Jon's dreams and do what Jon loves."]);
    expect(said('I also enjoy painting, and I fly to Rome in May.', JON)).toEqual(['Jon also enjoys painting, and Jon flies to Rome in May.']);
    expect(said('I could help with your accounts if you want.', JON)).toEqual(["Jon could help with Gina's accounts if Gina wants."]);
    // Not where the subject is shared, nor where `you` is an object, nor a verb whose past is its present.
    expect(said('Mel and I love hiking in the mountains.')).toEqual(['Mel and Caroline love hiking in the mountains.']);
    expect(said("I'll let you know when my order ships.", USER)).toEqual(['The user will let the assistant know when the user’s order ships.']);
    expect(said('I read that book about startups.', JON)).toEqual(['Jon read that book about startups.']);
  });

  it('gives a sentence begun with its verb or the speaker’s state its speaker', () => {
    expect(said('Lost my job as a banker.', JON)).toEqual(["Jon lost Jon's job as a banker."]);
    expect(said('Took a short trip to Rome to clear my mind.', JON)).toEqual(["Jon took a short trip to Rome to clear Jon's mind."]);
    expect(said('Started my own dance studio in March.', JON)).toEqual(["Jon started Jon's own dance studio in March."]);
    expect(said('Excited about my new job at the bakery!', JON)).toEqual(["Jon is excited about Jon's new job at the bakery."]);
    expect(said('Gonna take my kids to the beach.', JON)).toEqual(["Jon is gonna take Jon's kids to the beach."]);
    // A sentence whose subject is a thing done, or that wishes well, is left as said.
    expect(said('Painting with my kids is my favorite thing.', JON)).toEqual(["Painting with Jon's kids is Jon's favorite thing."]);
    expect(said('Happy birthday to your mom on Sunday!', JON)).toEqual(["Happy birthday to Gina's mom on Sunday."]);
  });

  it('leaves out the listener’s name called at the start, and an acknowledgement', () => {
    expect(said("Gina, you won't believe it: I got mentored by a business coach.", JON)).toEqual(["Gina won't believe it: Jon got mentored by a business coach."]);
    expect(said('Got it, your plan renews on 2025-03-12.', { speaker: 'the assistant', listener: 'the user' })).toEqual(['The user’s plan renews on 2025-03-12.']);
  });

  it('keeps a word that holds a person’s word as said, and writes myself and yourself as themselves', () => {
    expect(said("I'm carving out some me-time each day for my violin.", { speaker: 'Melanie', listener: 'Caroline' })).toEqual([
      "Melanie is carving out some me-time each day for Melanie's violin.",
    ]);
    expect(said('Art is helping you express yourself.')).toEqual(['Art is helping Melanie express themselves.']);
  });
});

describe('statements: what states nothing', () => {
  it('cuts an opening interjection or a name called, and states nothing of thanks or praise alone', () => {
    expect(said('Wow, that’s so cool! I painted a lake sunrise.')).toEqual(['Caroline painted a lake sunrise.']);
    expect(said('Yes: I moved here from Sweden.')).toEqual(['Caroline moved here from Sweden.']);
    expect(said('Thanks, Mel!')).toEqual([]);
    // "The user is proud of the assistant.": user, assistant: salience 2 < 3. (With names, 4 each, it is kept.)
    expect(said("I'm so proud of you!", USER)).toEqual([]);
  });

  it('cuts the listener’s name called at the end, and only the listener’s', () => {
    expect(said('I moved here from Sweden, Mel!')).toEqual(['Caroline moved here from Sweden.']);
    expect(said('I moved here from my home country, Sweden.')).toEqual(["Caroline moved here from Caroline's home country, Sweden."]);
  });

  it('states nothing of a question', () => {
    expect(said('Are you going to the parade on Saturday?')).toEqual([]);
    expect(said('Did you see my email kavya@old.example?', USER)).toEqual([]);
  });

  it('states nothing of a sentence that says nothing of a speaker and holds no value', () => {
    expect(said('The weather was lovely all week.')).toEqual([]);
    // With an identifier, a sentence of the task is a statement.
    // (Words that only stress, `still`, `really`, `so`, are left out as a note leaves them out.)
    expect(said('The ticket DATE-42 is still open.', USER)).toEqual(['The ticket DATE-42 is open.']);
  });
});

describe('statements: how a message is read', () => {
  it('reads "This is Olivia Dubois." as the speaker introducing themselves', () => {
    expect(said('This is Olivia Dubois.', USER)).toEqual(['The user is Olivia Dubois.']);
    expect(said("Hi, it's Olivia.", USER)).toEqual(['The user is Olivia.']);
  });

  it('cuts a compound sentence with two values into two statements', () => {
    expect(said('My phone is 415-555-0132 and my email is olivia@example.org.', USER)).toEqual([
      'The user’s phone is 415-555-0132.',
      'The user’s email is olivia@example.org.',
    ]);
    // Without a value in each part, one statement.
    expect(said('I went to a support group, and my mom came too.')).toEqual(["Caroline went to a support group, and Caroline's mom came too."]);
  });

  it('does not read a fenced code block', () => {
    expect(said("Here is the fix:\n```python\nmy_id = 'AB-12345'\nprint(my_id)\n```\nI changed the parser in src/dates.py.", USER)).toEqual([
      'The user changed the parser in src/dates.py.',
    ]);
  });

  it('reads wrapped lines as one paragraph, and list items apart', () => {
    expect(said('I have been working on\nthe new dashboard for\nthe finance team since March.', USER)).toEqual([
      'The user has been working on the new dashboard for the finance team since March.',
    ]);
    expect(said('My plans:\n- I fly to Lisbon on 2023-06-01.\n- I stay at Casa Azul.', USER)).toEqual([
      'The user flies to Lisbon on 2023-06-01.',
      'The user stays at Casa Azul.',
    ]);
  });

  it('keeps a path as written', () => {
    expect(said('The import of ./db fails.', USER)).toEqual(['The import of ./db fails.']);
  });
});

describe('statementsIn', () => {
  it('writes a statement of each tool call, and of each line of a result with an error or a value', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Open src/app.ts please.', turn: 1 },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"src/app.ts"}' }], turn: 1 },
      { role: 'tool', toolCallId: 'c1', content: 'line 1\nError: cannot find module ./db at src/app.ts:12\nok', turn: 1 },
      { role: 'assistant', content: 'The import of ./db fails.', turn: 1 },
    ];
    expect(statementsIn(messages, undefined).statements.map((s) => s.text)).toEqual([
      'Open src/app.ts please.',
      'The assistant called read_file with src/app.ts.',
      'read_file returned: Error: cannot find module ./db at src/app.ts:12',
      'The import of ./db fails.',
    ]);
  });

  it('cuts a long result line around what it was kept for', () => {
    const long = `${'lorem ipsum dolor sit amet '.repeat(10)}ticket DATE-42 closed`;
    const [s] = statementsIn([{ role: 'tool', toolCallId: 'x', content: long, turn: 1 }], undefined).statements;
    expect(s!.text).toBe(`a tool returned: …${long.slice(long.indexOf('DATE-42') - 40)}`);
  });

  it('sets the day from a date line, which is no statement, and resolves times against it; with dates, says when they talked', () => {
    const messages: Message[] = [
      { role: 'user', name: 'Caroline', content: 'DATE: 1:56 pm on 8 May, 2023\nI went to a support group yesterday.', turn: 1 },
      { role: 'assistant', name: 'Melanie', content: 'Since yesterday I have been painting.', turn: 1 },
    ];
    const r = statementsIn(messages, undefined);
    expect(r.statements.map((s) => s.text)).toEqual(['Caroline went to a support group on 7 May 2023.', 'Since 7 May 2023 Melanie has been painting.']);
    expect(r.today).toBe(MAY_8);
    expect(statementsIn(messages, undefined, { dates: true }).statements[0]!.text).toBe('On 8 May 2023, Caroline and Melanie talked.');
    // Without a date line the day given stays; with none, relative times stay as written.
    expect(statementsIn([messages[1]!], MAY_8 + 1).statements[0]!.text).toBe('Since 8 May 2023 Melanie has been painting.');
    expect(statementsIn([messages[1]!], undefined).statements[0]!.text).toBe('Since yesterday Melanie has been painting.');
    // A statement opening with a resolved time starts with a capital.
    expect(statementsOf('Yesterday I ran 10 km.', CAROLINE, MAY_8).map((x) => x.text)).toEqual(['On 7 May 2023 Caroline ran 10 km.']);
  });

  it('reads a statement made again once per turn, with the turn it was made in', () => {
    const messages: Message[] = [
      { role: 'user', content: 'My order is SE-10423. My order is SE-10423.', turn: 1 },
      { role: 'user', content: 'My order is SE-10423.', turn: 2 },
    ];
    expect(statementsIn(messages, undefined).statements.map((s) => [s.key, s.turn])).toEqual([
      ['the user’s order is se-10423.', 1],
      ['the user’s order is se-10423.', 2],
    ]);
  });
});

describe('sameFact', () => {
  it('replaces a corrected e-mail; never a fact of another kind', () => {
    expect(sameFact("The user's email is a@x.org.", "The user's new email is b@y.org.")).toBe(true);
    expect(sameFact("The user's email is a@x.org.", "The user's phone is 415-555-0132.")).toBe(false);
    expect(sameFact("The user's email is a@x.org.", "The user's order is AB-12345.")).toBe(false);
    // A number or a letter beside the value tells two facts apart.
    expect(sameFact("The user's code 1 is K1-100.", "The user's code 2 is K2-107.")).toBe(false);
    expect(sameFact('Remember fact A: /x/y.', 'Remember fact B: /z/w.')).toBe(false);
  });

  it('finds near-duplicate sentences without values (two thirds of their words), and not merely related ones', () => {
    expect(sameFact('For damaged items a photo helps them file it with the carrier.', 'For damaged items a photo helps them file it with the courier.')).toBe(true);
    expect(sameFact('Caroline went to a support group.', 'Caroline went to a pottery class.')).toBe(false);
    expect(sameFact('The user likes tea.', 'The user likes tea.')).toBe(true);
  });
});

describe('Restatements', () => {
  // Sentences from few words, so that many share most of theirs; some with a value, a number or a letter.
  const WORDS = ['user', 'order', 'email', 'phone', 'carrier', 'courier', 'photo', 'damaged', 'refund', 'Caroline', 'pottery', 'group', 'tea'];
  const VALUES = ['', ' a@x.org', ' b@y.org', ' SE-10423', ' AB-77', ' 415-555-0132', ' 2', ' A'];
  const sentence = fc.tuple(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 7 }), fc.constantFrom(...VALUES)).map(([w, v]) => `The ${w.join(' ')}${v}.`);

  it('finds exactly the entries sameFact finds, in the order they were filed, as entries come and go', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(sentence, fc.boolean()), { minLength: 1, maxLength: 40 }), (steps) => {
        const filed = new Restatements();
        const held = new Map<string, string>();
        steps.forEach(([text, remove], i) => {
          const expected = [...held].filter(([, was]) => sameFact(was, text)).map(([key]) => key);
          expect(filed.restatedBy(text)).toEqual(expected);
          if (remove && expected.length) {
            filed.delete(expected[0]!);
            held.delete(expected[0]!);
          }
          filed.set(`k${i}`, text);
          held.set(`k${i}`, text);
        });
      }),
      { seed: 44, numRuns: 300 },
    );
  });
});

describe('salienceOf', () => {
  it('ranks an identifier over a name over plain words', () => {
    // SE-10423 8 + user’s, order 2 = 10; Kavya 4 + user 1 = 5; user, green, tea 3 (`likes`, as `like`, tells nothing on its own).
    expect(salienceOf('The user’s order is SE-10423.')).toBe(10);
    expect(salienceOf('The user is Kavya.')).toBe(5);
    expect(salienceOf('The user likes green tea.')).toBe(3);
    // A bare number counts 2.
    expect(salienceOf('The user is 42.')).toBe(3);
  });

  it('counts plain words up to six: a long sentence is not worth an identifier', () => {
    expect(salienceOf('The user likes green tea and long walks by the river in the quiet morning hours.')).toBe(6);
  });

  it('counts no function word, interjection nor praise', () => {
    expect(salienceOf('Wow, that is so cool and amazing!')).toBe(0);
  });
});

describe('statements kept in a reading store', () => {
  /** A store in a map; `reads` lists the kind of each reading it was given to keep (`statements`, `note`). */
  function mapStore() {
    const kept = new Map<string, Kept>();
    const reads: string[] = [];
    const store: ReadingStore = {
      get<T extends Kept>(as: string, text: string, read: () => T): T {
        const key = `${as}\0${text}`;
        if (!kept.has(key)) {
          reads.push(as.split('\0')[0]!);
          kept.set(key, read());
        }
        // As a store on disk gives it: a copy.
        return structuredClone(kept.get(key)) as T;
      },
    };
    return { store, reads };
  }

  it('keeps a message’s statements with their salience and each statement’s note once; a fresh reader reads nothing again and compares by the notes kept', async () => {
    const { store, reads } = mapStore();
    const a = 'My email is kwame@example.org. I was born in Leeds.';
    const b = 'I was born in Leeds. My phone is 415-555-0132.';
    const written = [a, b].map((t) => statementsOf(t, USER, undefined, store).map((s) => [s.text, s.salience]));
    expect(written[1]![0]![0]).toBe('The user was born in Leeds.');
    // "The user was born in Leeds." is made by both messages: its note is kept once.
    expect(reads).toEqual(['statements', 'note', 'note', 'statements', 'note']);

    vi.resetModules();
    const fresh = await import('../src/upkeep/statements.js');
    const readAgain: string[] = [];
    const again: ReadingStore = {
      get<T extends Kept>(as: string, text: string): T {
        readAgain.push(as.split('\0')[0]!);
        return store.get(as, text, (): T => {
          throw new Error(`read again: ${text}`);
        });
      },
    };
    expect([a, b].map((t) => fresh.statementsOf(t, USER, undefined, again).map((s) => [s.text, s.salience]))).toEqual(written);
    expect(readAgain).toEqual(['statements', 'statements']);
    // A statement is compared by its note, taken from the store when first compared.
    const filed = new fresh.Restatements();
    filed.set('email', 'The user’s email is kwame@example.org.');
    expect(readAgain).toEqual(['statements', 'statements', 'note']);
    expect(filed.restatedBy('The user’s new email is kwame@new.example.')).toEqual(['email']);
  });

  it('a run with another store keeps its readings there, though the process read the same messages before', () => {
    const messages: Message[] = [{ role: 'user', content: 'My email is kwame@example.org. I was born in Leeds.', turn: 1 }];
    const [a, b] = [mapStore(), mapStore()];
    const first = statementsIn(messages, undefined, { store: a.store });
    expect(statementsIn(messages, undefined, { store: b.store })).toEqual(first);
    expect(a.reads).toEqual(['statements', 'note', 'note']);
    expect(b.reads).toEqual(a.reads);
  });
});
