import type { Stream } from './stream.js';

/**
 * Word pools shared by the profiles. Fact values (names, ids, preferences)
 * come from pools that filler text never uses, so a fact is present in a
 * context only where it was planted or repeated on purpose.
 */
export const FIRST_NAMES = [
  'Kavya', 'Noah', 'Amara', 'Mateo', 'Yuki', 'Priya', 'Liam', 'Fatima', 'Chen', 'Olivia', 'Arjun', 'Sofia',
  'Kwame', 'Elena', 'Tomasz', 'Aisha', 'Diego', 'Hannah', 'Ravi', 'Ingrid', 'Omar', 'Lucia', 'Jonas', 'Mei',
  'Tariq', 'Chloe', 'Emeka', 'Freya', 'Hiro', 'Zainab', 'Marco', 'Nadia', 'Samuel', 'Leila', 'Anders', 'Rosa',
  'Dmitri', 'Amelie', 'Kofi', 'Isabel', 'Farhan', 'Greta', 'Jae', 'Marisol', 'Niall', 'Paloma', 'Rahul', 'Saoirse',
] as const;

export const LAST_NAMES = [
  'Rao', 'Fischer', 'Okafor', 'Alvarez', 'Tanaka', 'Iyer', 'Murphy', 'Haddad', 'Wang', 'Bennett', 'Mehta', 'Rossi',
  'Mensah', 'Petrova', 'Nowak', 'Khan', 'Moreno', 'Schmidt', 'Nair', 'Lindqvist', 'Farouk', 'Costa', 'Berg', 'Lin',
  'Aziz', 'Dubois', 'Eze', 'Larsen', 'Sato', 'Bello', 'Ricci', 'Karimi', 'Osei', 'Novak', 'Quinn', 'Herrera',
] as const;

export const EMAIL_DOMAINS = ['example.com', 'mail.example', 'inbox.example.org', 'post.example.net', 'example.co.uk'] as const;

export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

export const CLOCK_TIMES = ['7 am', '8:30 am', '9 am', '10:15 am', 'noon', '1 pm', '2:30 pm', '4 pm', '5:45 pm', '6 pm', '7:30 pm', '9 pm'] as const;

/** A person's full name. */
export function fullName(rng: Stream): { first: string; last: string; full: string } {
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  return { first, last, full: `${first} ${last}` };
}

/** An email address for a person, different on each call (so a correction differs). */
export function email(rng: Stream, first: string, last: string): string {
  const f = first.toLowerCase();
  const l = last.toLowerCase();
  const local = rng.pick([`${f}.${l}`, `${f}${l}`, `${f[0]}${l}`, `${f}_${l}`, `${f}${rng.int(1, 99)}`, `${f}.${l}${rng.int(10, 99)}`]);
  return `${local}@${rng.pick(EMAIL_DOMAINS)}`;
}

/** A phone number in one of several national formats. */
export function phone(rng: Stream): string {
  const d = (n: number) => Array.from({ length: n }, () => String(rng.int(0, 9))).join('');
  return rng.pick([
    () => `(${rng.int(201, 989)}) 555-${d(4)}`,
    () => `+1 ${rng.int(201, 989)} 555 ${d(4)}`,
    () => `+44 7700 9${d(5)}`,
    () => `+91 9${d(4)} ${d(5)}`,
    () => `+49 151 ${d(4)} ${d(4)}`,
  ])();
}

/** An order id such as `SE-10423`. */
export function orderId(rng: Stream): string {
  return `${rng.pick(['SE', 'OR', 'WB', 'KX', 'MP', 'TR'])}-${rng.int(10000, 99999)}`;
}

/** A lower-case id for the scenario's `user` field. */
export function userSlug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}
