/** How many words of an injection turn memory upkeep repeats. */
export const QUOTE_WORDS = 12;

/**
 * The part of a flagged user message that a summary or a fact sheet repeats:
 * its first 12 words, whitespace collapsed. Real summarizers tend to quote an
 * instruction rather than paraphrase it, and memory extractors store it as a
 * standing preference; ctxsim measures exposure by this quote, which the
 * verbatim message (or a retrieved copy) also contains.
 */
export function injectionQuote(text: string): string {
  return text.trim().split(/\s+/).slice(0, QUOTE_WORDS).join(' ');
}
