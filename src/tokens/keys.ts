import type { CacheKey } from './token-cache.js';

/**
 * 32-bit integers by 128-bit text key, in typed arrays: open addressing with
 * linear probing, the slot picked by the key's first word (its bits are
 * already uniform: they come from SHA-256), doubled when three quarters
 * full. A run keeps a count for every text it met this way, without the
 * texts and without an object per entry (21 bytes per slot).
 */
export class KeyTable {
  /** Four key words per slot. */
  private keys: Uint32Array;
  private values: Int32Array;
  private used: Uint8Array;
  private mask: number;
  /** Entries held. */
  size = 0;

  constructor(capacity = 1024) {
    const slots = 2 ** Math.ceil(Math.log2(Math.max(2, capacity)));
    this.keys = new Uint32Array(4 * slots);
    this.values = new Int32Array(slots);
    this.used = new Uint8Array(slots);
    this.mask = slots - 1;
  }

  /** The number stored under `key`, if any. */
  get(key: CacheKey): number | undefined {
    const i = this.find(key);
    return this.used[i] ? this.values[i] : undefined;
  }

  /** Stores `value` (a 32-bit signed integer) under `key`, replacing what was there. */
  set(key: CacheKey, value: number): void {
    let i = this.find(key);
    if (!this.used[i]) {
      if (4 * (this.size + 1) > 3 * this.used.length) {
        this.grow();
        i = this.find(key);
      }
      this.used[i] = 1;
      this.keys.set(key, 4 * i);
      this.size++;
    }
    this.values[i] = value;
  }

  /** The slot that holds `key`, or the empty slot where it would go. */
  private find(key: CacheKey): number {
    const { keys, used, mask } = this;
    let i = key[0] & mask;
    while (used[i] && !(keys[4 * i] === key[0] && keys[4 * i + 1] === key[1] && keys[4 * i + 2] === key[2] && keys[4 * i + 3] === key[3])) i = (i + 1) & mask;
    return i;
  }

  private grow(): void {
    const { keys, values, used } = this;
    const slots = 2 * used.length;
    this.keys = new Uint32Array(4 * slots);
    this.values = new Int32Array(slots);
    this.used = new Uint8Array(slots);
    this.mask = slots - 1;
    for (let j = 0; j < used.length; j++) {
      if (!used[j]) continue;
      const key = keys.subarray(4 * j, 4 * j + 4);
      let i = key[0]! & this.mask;
      while (this.used[i]) i = (i + 1) & this.mask;
      this.used[i] = 1;
      this.keys.set(key, 4 * i);
      this.values[i] = values[j]!;
    }
  }
}
