/**
 * The consistent-hash ring a sharder assigns objects with (timebertt/kubernetes-controller-sharding's partitioning):
 * each live shard puts 100 tokens on a 64-bit ring (the hash of the shard's name followed by the token's number),
 * and a key belongs to the shard of the first token at or after the key's hash, wrapping around. When a shard joins
 * or leaves, only the keys between its tokens and their predecessors change hands — about 1/n of them, where a hash
 * modulo n would move most.
 *
 * The hash is the first 64 bits of SHA-256 (node:crypto): only the sharder hashes, so any stable, well-spread 64-bit
 * hash serves; TKCS's xxhash64 has no implementation in Node's core.
 */
import { createHash } from 'node:crypto';

/** Tokens each shard puts on the ring (TKCS's). */
export const TOKENS_PER_SHARD = 100;

function hash64(text: string): bigint {
  return createHash('sha256').update(text).digest().readBigUInt64BE(0);
}

/** A ring over a set of shard names; immutable. */
export class HashRing {
  private readonly tokens: bigint[];
  private readonly owners: string[];

  constructor(readonly shards: readonly string[]) {
    const all: Array<[bigint, string]> = [];
    for (const shard of new Set(shards))
      for (let i = 0; i < TOKENS_PER_SHARD; i++) all.push([hash64(`${shard}${i}`), shard]);
    // equal tokens (never seen with SHA-256) resolve by name, so every sharder builds the same ring
    all.sort(([a, s], [b, t]) => (a < b ? -1 : a > b ? 1 : s < t ? -1 : s > t ? 1 : 0));
    this.tokens = all.map(([t]) => t);
    this.owners = all.map(([, s]) => s);
  }

  /** The shard `key` belongs to, or undefined on an empty ring. */
  shardFor(key: string): string | undefined {
    if (this.tokens.length === 0) return undefined;
    const h = hash64(key);
    let lo = 0;
    let hi = this.tokens.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tokens[mid] < h) lo = mid + 1;
      else hi = mid;
    }
    return this.owners[lo === this.tokens.length ? 0 : lo];
  }
}
