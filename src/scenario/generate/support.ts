import { z } from 'zod';
import type { TurnOut } from '../docs.js';
import { email, fullName, orderId, phone, userSlug, WEEKDAYS } from './lexicon.js';
import { commonOverrides, share, type CommonProfileParams, type Profile } from './profile.js';
import { compose, expand, targetWords, type Slots } from './text.js';

/** Support profile parameters. */
export interface SupportParams extends CommonProfileParams {
  /** Share of conversations in which the user corrects their email or phone. */
  correctionShare: number;
  /** Probes fall in the last part of the conversation: from this fraction of its turns on. */
  probeFrom: number;
}

const STORES = ['Northwind Outfitters', 'Lumen Home', 'Quill & Co', 'Tidewater Sports', 'Brightcart', 'Maple Lane Goods'];
const PRODUCTS = [
  'running shoes', 'rain jacket', 'wool sweater', 'desk lamp', 'coffee grinder', 'yoga mat', 'backpack', 'pair of jeans',
  'bluetooth speaker', 'cast iron pan', 'duvet cover', 'water bottle', 'hiking boots', 'wall clock', 'phone case', 'linen shirt',
];
const ISSUES = [
  "hasn't arrived yet",
  'arrived damaged',
  'came in the wrong size',
  'is missing an item',
  'shows as delivered but I never got it',
  'was charged twice',
];

const SLOTS: Slots = {
  product: PRODUCTS,
  weekday: WEEKDAYS,
  days: ['two', 'three', 'five', 'seven', 'ten'],
  courier: ['the courier', 'the delivery company', 'the driver', 'the carrier'],
  feel: ['a bit frustrated', 'honestly quite annoyed', 'worried', 'a little confused', 'disappointed'],
};

/** Small talk and context a customer adds around what they came to say. */
const USER_FILLERS = [
  'I [ordered|bought] it as a [gift|birthday present|surprise] for my [sister|dad|best friend|partner].',
  'I was [really|quite] looking forward to [using|wearing|trying] it this [weekend|week].',
  "I've [checked|refreshed] the tracking page [a few times|twice today|every morning] and nothing has changed.",
  "To be honest I'm {feel} about the whole thing.",
  "I've shopped with you [for years|many times before] and this [has never happened|is a first].",
  'The [box|parcel|package] [looked|seemed] [fine|a bit crushed|opened] when it came.',
  'I [work|am out] [most days|during the day|until late], so [timing matters|I might miss a delivery].',
  'My [neighbour|building manager|flatmate] [sometimes takes|usually signs for] parcels for me.',
  'I [read|checked] the FAQ but [it did not cover this|could not find an answer].',
  'Sorry if this is [a silly question|obvious], I [just want to be sure|do not do this often].',
  'It [said|was supposed to arrive] by {weekday} [at the latest|according to the email].',
  'I would [prefer|rather have] a [replacement|refund] if that is possible.',
  'The [colour|fit|size] [was not what I expected|looked different online].',
  'I [need|wanted] it for [a trip|a wedding|work] on {weekday}, so the timing [matters|is tight].',
  'Your [app|website] [logged me out|kept spinning] when I tried to do this myself.',
  'I [called|tried calling] earlier but [the line was busy|nobody picked up].',
  'The last time I ordered [it was fine|it came in two days].',
  '[Also|Oh and], the [tracking link|confirmation email] [does not open|went to spam].',
  'I [paid|paid extra] for [express|next-day] shipping.',
];

/** What an agent adds: policy, reassurance, next steps. */
const ASSISTANT_FILLERS = [
  '[I completely understand|I understand|I can see why] [how frustrating that is|that is annoying|you are concerned].',
  'Returns are free within 30 days of delivery, and refunds go back to the original payment method.',
  'Refunds usually [take|appear within] 3 to 5 business days once the item is back with us.',
  '[Our warehouse|The carrier] [sometimes runs|has been running] a day or two behind this [week|month].',
  'I have [added a note|left a note] on the [order|account] so [any colleague|the next agent] can see the history.',
  'You will get an email [as soon as|the moment] anything changes.',
  'If it is easier, you can also [start a return|track everything] from the Orders page in your account.',
  'There is no charge for the replacement and you can keep the original packaging.',
  '[Thanks for your patience|I appreciate your patience] while I [look into this|check].',
  'I have [escalated|flagged] this to [our logistics team|the carrier] [with priority|as urgent].',
  'The exchange will ship [within|in] {days} business days [once it is approved|after we get the return].',
  'For damaged items a photo helps us [claim it back|file it] with {courier}.',
  '[I can also|I will] [send|email] you a summary of [this chat|what we agreed].',
  'Orders placed [after 2 pm|at weekends] [ship|are packed] the next working day.',
  'I [checked|looked at] the history and [nothing else is pending|everything else is in order].',
  '[If|In case] {courier} [misses you|cannot deliver], the parcel goes to the nearest pickup point.',
  'You [do not need|will not need] to [call|contact] us again; I will follow up myself.',
  'We are [sorry|really sorry] for the [trouble|inconvenience] this has caused.',
];

/** Topics of the middle of a support chat: what the user asks, how the agent answers. */
const TOPICS: readonly { user: readonly string[]; assistant: readonly string[] }[] = [
  {
    user: ['Any news on [the|my] delivery?', 'Can you check where the [parcel|package] is now?', 'Is there an updated delivery date?'],
    assistant: ['The [parcel|package] is at the local depot and [should go out for delivery|is scheduled for delivery] on {weekday}.', 'Tracking shows it left the warehouse [yesterday|this morning].'],
  },
  {
    user: ['How do I return the {product}?', 'What is the return process for the {product}?', 'Can I send the {product} back?'],
    assistant: ['I have [emailed|sent] you a prepaid return label; drop the parcel at any post office.', 'You can return it from the Orders page: choose the item, pick a reason and print the label.'],
  },
  {
    user: ['Could I swap it for a [bigger|smaller] size instead?', 'Do you have the {product} in [blue|black|a medium]?', 'Is an exchange possible rather than a refund?'],
    assistant: ['Yes, the [larger|smaller] size is in stock and I can reserve it for you.', 'An exchange is possible; I will set it up so the new one ships when the return is scanned.'],
  },
  {
    user: ['When will I get my money back?', 'How long does the refund take?', 'Will the refund include shipping?'],
    assistant: ['The refund is issued as soon as the return is scanned and takes 3 to 5 business days to show.', 'Yes, shipping is refunded too since the problem was on our side.'],
  },
  {
    user: ['Can I change the delivery address?', 'Could it go to my office instead?', 'Can the driver leave it with a neighbour?'],
    assistant: ['I can update the address until the parcel leaves the depot; I have changed it now.', 'I have added a delivery note asking the driver to leave it with a neighbour.'],
  },
  {
    user: ['I also had a discount code that did not apply.', 'The promo code from your newsletter did not work at checkout.', 'Do you price match?'],
    assistant: ['I have applied the discount manually and refunded the difference.', 'We do not price match, but I can offer 10% off your next order.'],
  },
  {
    user: ['Is the {product} covered by a warranty?', 'What if it breaks after a few months?', 'Does the {product} come with a guarantee?'],
    assistant: ['It has a two-year warranty; keep the order confirmation as proof of purchase.', 'Faults within two years are repaired or replaced free of charge.'],
  },
  {
    user: ['Can I add something to the order?', 'Could you also send a {product}?', 'Is it too late to cancel one item?'],
    assistant: ['The order is already packed, so the easiest way is a new order; I can give you free shipping on it.', 'I cancelled that item and the refund is on its way.'],
  },
  {
    user: ['Okay, that makes sense.', 'Alright, thanks for checking.', 'Got it. What happens next?', 'Fine, let us do that.'],
    assistant: ['Great, I have set that up for you.', 'Perfect, it is all in place now.', 'Next you will get a confirmation email with the details.'],
  },
];

const PROBE_ASK: Record<string, { user: readonly string[]; assistant: readonly string[] }> = {
  name: {
    user: ['Whose name will the refund be issued under, exactly as you have it?', 'Can you confirm the name you have on the account?'],
    assistant: ['It is under {value}.', 'The account is in the name of {value}.'],
  },
  order_id: {
    user: ['Sorry, which order number are you looking at?', 'Can you repeat the order number for my notes?'],
    assistant: ['It is order {value}.', 'I am looking at order {value}.'],
  },
  email: {
    user: ['Where will you send the confirmation?', 'Which email address will the return label go to?'],
    assistant: ['It will go to {value}.', 'I am sending it to {value}.'],
  },
  phone: {
    user: ['Which number will the courier call?', 'What phone number do you have for me?'],
    assistant: ['They will call {value}.', 'I have {value} on file.'],
  },
};

const STATE: Record<string, readonly string[]> = {
  email: ['My email is {value}.', 'You can reach me at {value}.', 'The email on the account is {value}.'],
  phone: ['My phone number is {value}.', 'You can call me on {value}.', 'My number is {value} if the courier needs it.'],
};

const CORRECT: Record<string, readonly string[]> = {
  email: ['Sorry, I gave you the wrong email earlier. It is actually {value}.', 'Correction: my email is {value}, I mistyped it before.'],
  phone: ['Oops, my number is actually {value}, I swapped some digits before.', 'Sorry, small correction: my phone number is {value}.'],
};

const FACTS = ['name', 'order_id', 'email', 'phone'] as const;
type Fact = (typeof FACTS)[number];

interface Plan {
  user: string[];
  assistant: string[];
  facts: Record<string, string>;
  probe: string[];
}

/**
 * E-commerce support: the user gives name and order ID early, email and
 * phone a little later, sometimes corrects one of them, and the late turns
 * ask for facts given earlier (the agent's reply restates the value).
 */
export const support: Profile<SupportParams> = {
  id: 'support',
  describe: 'e-commerce support chat: name, order ID, email, phone; some corrections; late probes',
  defaults: { turns: [5, 40], userWords: 16, assistantWords: 30, spread: 0.6, correctionShare: 0.25, probeFrom: 0.6 },
  overrides: z.strictObject({ ...commonOverrides, correctionShare: share.optional(), probeFrom: share.optional() }),
  build({ id, rng, turns: T, params }) {
    const person = fullName(rng);
    const values: Record<Fact, string> = { name: person.full, order_id: orderId(rng), email: email(rng, person.first, person.last), phone: phone(rng) };
    const store = rng.pick(STORES);
    const product = rng.pick(PRODUCTS);
    const issue = rng.pick(ISSUES);
    const slots: Slots = { ...SLOTS, first: person.first, store };
    const plans: Plan[] = Array.from({ length: T }, () => ({ user: [], assistant: [], facts: {}, probe: [] }));
    const at = (turn: number) => plans[turn - 1]!;

    // When each fact is stated (turn 1-based). T ≥ 3 keeps every slot in range.
    const stated: Record<Fact, number> = {
      name: 1,
      order_id: T >= 6 && rng.chance(0.4) ? 2 : 1,
      email: rng.int(Math.min(2, T), Math.max(Math.min(2, T), Math.min(4, T - 2))),
      phone: rng.int(Math.min(2, T), Math.max(Math.min(2, T), Math.min(5, T - 2))),
    };
    at(1).user.push(expand("[Hi|Hello|Hey there], [I'm|this is|my name is] {value}.", rng, { value: values.name }));
    at(1).facts.name = values.name;
    const issueLine = `[My order|The order|Order] {value} {issue}.`;
    if (stated.order_id === 1) {
      at(1).user.push(expand(issueLine, rng, { value: values.order_id, issue }));
      at(1).assistant.push(expand(`[Sorry to hear that|I'm sorry about that|Thanks for reaching out], ${person.first}. Let me [look into|check] order {value}.`, rng, { value: values.order_id }));
    } else {
      at(1).user.push(expand(`[My|The] {product} {issue}.`, rng, { product, issue }));
      at(1).assistant.push(expand(`[Sorry to hear that|I'm sorry about that], ${person.first}. Could you give me the order number?`, rng, {}));
      at(2).user.push(expand(`[Sure|Of course|Yes], [it's|the order number is] {value}.`, rng, { value: values.order_id }));
      at(2).assistant.push(expand('[Thanks|Thank you], I have found it.', rng, {}));
    }
    at(1).facts.order_id = values.order_id;
    if (stated.order_id === 2) {
      delete at(1).facts.order_id;
      at(2).facts.order_id = values.order_id;
    }
    for (const f of ['email', 'phone'] as const) {
      const p = at(stated[f]);
      p.user.push(expand(rng.pick(STATE[f]!), rng, { value: values[f] }));
      p.facts[f] = values[f];
      p.assistant.push(rng.chance(0.3) ? expand('[Noted|Got it]: {value}.', rng, { value: values[f] }) : expand('[Thanks|Thank you], [I have noted that|that is saved on the order].', rng, {}));
    }

    // A correction replaces email or phone some turns later; it is always probed afterwards.
    const lastTurn = Math.max(...Object.values(stated));
    const probeStart = Math.min(T, Math.max(lastTurn + 1, Math.ceil(T * params.probeFrom)));
    const probes: [Fact, number][] = [];
    if (rng.chance(params.correctionShare) && T >= 4) {
      const f = rng.pick(['email', 'phone'] as const);
      const when = rng.int(stated[f] + 1, T - 1);
      let fixed = f === 'email' ? email(rng, person.first, person.last) : phone(rng);
      if (fixed === values[f]) fixed = f === 'email' ? `${person.first.toLowerCase()}.${person.last.toLowerCase()}@mail.example` : `+1 555 ${rng.int(100, 999)} ${rng.int(1000, 9999)}`;
      values[f] = fixed;
      at(when).user.push(expand(rng.pick(CORRECT[f]!), rng, { value: fixed }));
      at(when).facts[f] = fixed;
      at(when).assistant.push(expand('[No problem|No worries], I have updated it.', rng, {}));
      probes.push([f, rng.int(Math.max(when + 1, probeStart), T)]);
    }
    const others = rng.sample(FACTS.filter((f) => !probes.some(([p]) => p === f)), rng.int(1, 3 - probes.length));
    for (const f of others) probes.push([f, rng.int(probeStart, T)]);
    for (const [f, turn] of probes) {
      const ask = PROBE_ASK[f]!;
      at(turn).user.push(expand(rng.pick(ask.user), rng, slots));
      at(turn).assistant.push(expand(rng.pick(ask.assistant), rng, { value: values[f] }));
      at(turn).probe.push(f);
    }

    // Every other turn is about the order: delivery, returns, refunds, small talk.
    const out: TurnOut[] = plans.map((p, i) => {
      if (!p.user.length) {
        const topic = i === T - 1 && rng.chance(0.6) ? undefined : rng.pick(TOPICS);
        if (topic) {
          p.user.push(expand(rng.pick(topic.user), rng, { ...slots, product }));
          p.assistant.push(expand(rng.pick(topic.assistant), rng, { ...slots, product }));
        } else {
          p.user.push(expand("[Thanks, that's all I needed|Great, thank you for your help|Perfect, that's everything].", rng, {}));
          p.assistant.push(expand(`[You're welcome|Happy to help], ${person.first}! [Have a great day|Enjoy the rest of your week].`, rng, {}));
        }
      }
      const user = compose(rng, p.user, USER_FILLERS, { ...slots, product }, targetWords(rng, params.userWords, params.spread), i === 0 ? 0 : 0.25);
      const assistant = compose(rng, p.assistant, ASSISTANT_FILLERS, { ...slots, product }, targetWords(rng, params.assistantWords, params.spread));
      return {
        user,
        ...(Object.keys(p.facts).length && { facts: p.facts }),
        ...(p.probe.length && { probe: [...new Set(p.probe)] }),
        assistant,
      };
    });
    return {
      id,
      title: `Support: ${product} ${issue}`,
      system: `You are a friendly customer support agent for ${store}, an online store. Be concise and confirm details back to the customer.`,
      user: userSlug(person.full),
      turns: out,
    };
  },
};
