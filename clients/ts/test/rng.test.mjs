// Conformance of the SDK's RNG (src/rng.ts, src/sha256.ts) with protocol/vectors.json.
// Run: npm test (in clients/ts, after npm run build)
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { InvalidSeed, SeedRng, cardText, parseCard, sha256Hex, shuffledDeck } from '../dist/index.js';

const vectors = JSON.parse(readFileSync(new URL('../../../protocol/vectors.json', import.meta.url), 'utf8'));
const seeds = vectors.rng.seeds;

test('vectors file has rng seeds', () => {
  assert.equal(vectors.format, 1);
  assert.ok(seeds.length >= 5);
});

test('block 0 of "abc" is sha256("abc:0")', () => {
  const digest = createHash('sha256').update('abc:0').digest();
  const rng = new SeedRng('abc');
  for (let i = 0; i < 8; i++) assert.equal(rng.nextU32(), digest.readUInt32BE(4 * i));
});

for (const v of seeds) {
  test(`u32 stream for ${JSON.stringify(v.seed)}`, () => {
    const rng = new SeedRng(v.seed);
    assert.deepEqual(v.u32.map(() => rng.nextU32()), v.u32);
  });

  test(`below(n) for ${JSON.stringify(v.seed)}`, () => {
    const ns = Object.keys(v.below);
    assert.ok(ns.length >= 6);
    for (const key of ns) {
      const n = Number(key);
      const rng = new SeedRng(v.seed);
      assert.deepEqual(v.below[key].map(() => rng.below(n)), v.below[key], `n = ${key}`);
    }
  });

  test(`shuffledDeck for ${JSON.stringify(v.seed)}`, () => {
    for (const [decks, expected] of Object.entries(v.shuffled_deck)) {
      assert.deepEqual(shuffledDeck(v.seed, Number(decks)), expected, `decks = ${decks}`);
    }
    assert.deepEqual(v.shuffled_deck['1'].map(cardText), v.shuffled_deck_text_1);
  });
}

test('first 10 cards of shuffledDeck("abc", 1)', () => {
  assert.deepEqual(
    shuffledDeck('abc', 1).slice(0, 10).map(cardText),
    ['9C', '7C', '8S', '3D', '8H', '7S', 'QD', '8C', '9H', 'QH'],
  );
});

test('card texts', () => {
  assert.equal(cardText(0), 'AC');
  assert.equal(cardText(9), '10C');
  assert.equal(cardText(12), 'KC');
  assert.equal(cardText(13), 'AD');
  assert.equal(cardText(51), 'KS');
  assert.equal(cardText(52), 'AC');
  for (let face = 0; face < 52; face++) assert.equal(parseCard(cardText(face)), face);
});

test('sha256 matches node:crypto on many lengths', () => {
  for (let n = 0; n < 200; n++) {
    const text = 'abc:'.repeat(n).slice(0, n * 3 + (n % 5));
    assert.equal(sha256Hex(text), createHash('sha256').update(text, 'ascii').digest('hex'), `length ${text.length}`);
  }
});

test('invalid seeds are rejected', () => {
  for (const bad of ['', 'Z'.repeat(129), 'a b', 'é', 'abc\n', 42]) {
    assert.throws(() => new SeedRng(bad), InvalidSeed);
  }
  new SeedRng('Z'.repeat(128));
});
