/** A fact as the user stated it: name and value. */
export type Fact = readonly [name: string, value: string];

/** What a bounded memory knows of an entry it keeps: in how many turns it was mentioned, the last of them, and how salient it is. */
export interface Mentions {
  /** Turns that mentioned it since the memory last took it in (an entry lost and mentioned again starts at 1). */
  readonly count: number;
  /** The last turn that mentioned it (0 when not known). */
  readonly lastTurn: number;
  /** Its statement's salience (`salienceOf` in `statements.ts`: the higher, the longer it is kept); absent: kept before any other. */
  readonly tier?: number;
}

/** A user message flagged `injection: true`, as stored: its turn and text. */
export interface Injected {
  turn: number;
  text: string;
}
