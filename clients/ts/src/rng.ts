// The seeded RNG and card ids of protocol/RNG.md (the same stream as protocol/rng.py and
// protocol/cards.py; checked against protocol/vectors.json by test/rng.test.mjs).

import { sha256Words } from './sha256.js';

export const MAX_SEED_LENGTH = 128;
export const SUITS = 'CDHS';
export const RANKS = Object.freeze(['A', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'J', 'Q', 'K'] as const);

const SEED_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const U32 = 2 ** 32; // exact as a Number (2^32 < 2^53)

/** A seed that is not 1..128 characters of A-Z a-z 0-9 . _ : - */
export class InvalidSeed extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidSeed';
  }
}

/** Returns the seed if it is 1..128 characters of A-Z a-z 0-9 . _ : - , else throws InvalidSeed. */
export function validateSeed(seed: unknown): string {
  if (typeof seed !== 'string') throw new InvalidSeed(`seed must be a string, got ${typeof seed}`);
  if (!SEED_RE.test(seed)) {
    throw new InvalidSeed(
      `seed must be 1 to ${MAX_SEED_LENGTH} characters of A-Z a-z 0-9 . _ : - , got ${JSON.stringify(seed)}`,
    );
  }
  return seed;
}

/** The stream of RNG.md: block k is sha256("<seed>:<k>") read as eight big-endian words. */
export class SeedRng {
  readonly seed: string;
  private block = 0;
  private words: Uint32Array = new Uint32Array(8);
  private position = 8; // buffer empty: the first draw computes block 0

  constructor(seed: string) {
    this.seed = validateSeed(seed);
  }

  /** Next unsigned 32-bit word of the stream, as a Number in [0, 2^32). */
  nextU32(): number {
    if (this.position >= 8) {
      this.words = sha256Words(`${this.seed}:${this.block}`);
      this.block += 1;
      this.position = 0;
    }
    return this.words[this.position++]!;
  }

  /** Uniform integer in [0, n) for 1 <= n <= 2^32, by rejection sampling. */
  below(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > U32) {
      throw new RangeError(`below(n) needs an integer 1 <= n <= 2^32, got ${n}`);
    }
    const limit = U32 - (U32 % n);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % n;
    }
  }

  /** Fisher-Yates in place: for i = length-1 down to 1, swap items[i] and items[below(i+1)]. */
  shuffle<T>(items: T[]): void {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      const t = items[i]!;
      items[i] = items[j]!;
      items[j] = t;
    }
  }
}

/** Card ids 0 .. 52*decks-1 in initial order, shuffled with a fresh SeedRng(seed). Deals take from index 0. */
export function shuffledDeck(seed: string, decks: number): number[] {
  if (!Number.isInteger(decks) || decks < 1) throw new RangeError(`decks must be a positive integer, got ${decks}`);
  const cards = Array.from({ length: 52 * decks }, (_, i) => i);
  new SeedRng(seed).shuffle(cards);
  return cards;
}

/** 1 (ace) .. 13 (king). */
export function rankOf(id: number): number {
  return ((id % 52) % 13) + 1;
}

/** 0 clubs, 1 diamonds, 2 hearts, 3 spades. */
export function suitOf(id: number): number {
  return Math.floor((id % 52) / 13);
}

export function isRed(id: number): boolean {
  const s = suitOf(id);
  return s === 1 || s === 2;
}

/** Rank text + suit letter, e.g. cardText(0) === 'AC', cardText(9) === '10C', cardText(52) === 'AC'. */
export function cardText(id: number): string {
  if (!Number.isInteger(id) || id < 0) throw new RangeError(`bad card id: ${id}`);
  const face = id % 52;
  return RANKS[face % 13]! + SUITS[Math.floor(face / 13)]!;
}

/** Face 0..51 of a card text such as 'AC', '10H', 'KS'. */
export function parseCard(text: string): number {
  const m = typeof text === 'string' ? /^(A|[2-9]|10|J|Q|K)([CDHS])$/.exec(text) : null;
  if (!m) throw new RangeError(`not a card text: ${JSON.stringify(text)}`);
  return 13 * SUITS.indexOf(m[2]!) + (RANKS as readonly string[]).indexOf(m[1]!);
}
