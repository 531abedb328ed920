/** A fact as the user stated it: name and value. */
export type Fact = readonly [name: string, value: string];
