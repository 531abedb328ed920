import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';

/**
 * js-tiktoken's tokenizer, loaded in a quarter of the time. Its constructor
 * spends about 1.7 s per process (and per worker) turning the encoding's
 * ranks into the map its `encode` looks pieces up in — byte values joined
 * by commas → rank — by way of an object of 200,000 keys and a byte array
 * per token. Here the constructor gets the ranks without their token list
 * (it still sets up the pattern and the special tokens), and the same map
 * is built straight from the list (a test compares it entry by entry with
 * the constructor's). `encode` is the library's, unchanged; `decode` is not
 * used by ctxsim and has no table here. The map is not part of the
 * library's typed API: js-tiktoken's version is pinned exactly, and is part
 * of the token cache's counter id.
 */
export function loadTiktoken(ranks: TiktokenBPE): Tiktoken {
  const enc = new Tiktoken({ ...ranks, bpe_ranks: '' });
  (enc as unknown as { rankMap: Map<string, number> }).rankMap = rankMap(ranks.bpe_ranks);
  return enc;
}

/** Base64 digit values by character code (−1: not a digit, as `=` padding). */
const BASE64 = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[c.charCodeAt(0)] = i;
const DECIMAL = Array.from({ length: 256 }, (_, b) => String(b));

/**
 * The rank of each token by its bytes joined with commas, from js-tiktoken's
 * `bpe_ranks`: lines of `<name> <first rank> <token> <token> …`, each token
 * base64, ranks counting up from the first.
 */
export function rankMap(bpeRanks: string): Map<string, number> {
  const map = new Map<string, number>();
  const digits: string[] = [];
  for (let line = 0; line < bpeRanks.length; ) {
    let eol = bpeRanks.indexOf('\n', line);
    if (eol < 0) eol = bpeRanks.length;
    const name = bpeRanks.indexOf(' ', line);
    if (name < 0 || name >= eol) {
      line = eol + 1;
      continue;
    }
    let at = bpeRanks.indexOf(' ', name + 1);
    if (at < 0 || at > eol) at = eol;
    let rank = Number.parseInt(bpeRanks.slice(name + 1, at), 10);
    for (at++; at < eol; ) {
      let end = bpeRanks.indexOf(' ', at);
      if (end < 0 || end > eol) end = eol;
      if (end > at) {
        digits.length = 0;
        let bits = 0;
        let acc = 0;
        for (let i = at; i < end; i++) {
          const v = BASE64[bpeRanks.charCodeAt(i)] ?? -1;
          if (v < 0) continue;
          acc = ((acc << 6) | v) & 0xffffff;
          bits += 6;
          if (bits >= 8) {
            bits -= 8;
            digits.push(DECIMAL[(acc >> bits) & 255]!);
          }
        }
        map.set(digits.join(','), rank++);
      }
      at = end + 1;
    }
    line = eol + 1;
  }
  return map;
}
