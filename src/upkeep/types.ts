/** A fact as the user stated it: name and value. */
export type Fact = readonly [name: string, value: string];

/** A fact as a turn stated it: name, value, and the turn (when known), which makes it fresh in a summary. */
export type StatedFact = readonly [name: string, value: string, turn?: number];

/** What a bounded memory knows of a fact it keeps: in how many turns it was stated, and the last of them. */
export interface Mentions {
  /** Turns that stated the fact since the memory last took it in (a fact lost and stated again starts at 1). */
  readonly count: number;
  /** The last turn that stated it (0 when not known). */
  readonly lastTurn: number;
}

/** A user message flagged `injection: true`, as stored: its turn and text. */
export interface Injected {
  turn: number;
  text: string;
}
