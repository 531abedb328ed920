/** Lower case, whitespace collapsed: the same rule probe scoring uses to find a fact value in text. */
export function normalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * Words of a text, lower-cased. Identifiers stay whole: letters and digits
 * joined by `-`, `'`, `@` or `.` are one word (`se-10423`, `kavya@new.example`).
 */
export function words(text: string): string[] {
  return text.toLowerCase().replace(/’/g, "'").match(/[\p{L}\p{N}]+(?:['\-@.][\p{L}\p{N}]+)*/gu) ?? [];
}

/** Words that carry no topic: left out of embeddings and of summary topics. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just let me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own please same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will with ' +
    "would you your yours yourself yourselves ok okay yes yeah hi hey hello thanks thank sure i'm i've i'll i'd you're you've " +
    "you'll you'd it's that's there's what's let's don't doesn't didn't isn't wasn't aren't weren't can't couldn't won't " +
    "wouldn't shouldn't hasn't haven't hadn't he's she's we're we've they're they've"
  ).split(/\s+/),
);

/** The topic words of a text: its words without stopwords, in order. */
export function contentWords(text: string): string[] {
  return words(text).filter((w) => !STOPWORDS.has(w));
}
