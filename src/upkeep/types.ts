/** A fact as the user stated it: name and value. */
export type Fact = readonly [name: string, value: string];

/** A user message flagged `injection: true`, as stored: its turn and text. */
export interface Injected {
  turn: number;
  text: string;
}
