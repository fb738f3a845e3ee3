// Conformance of the SDK's deals, views and state hashes with the "deals" part of
// protocol/vectors.json: every dealt table and view, every state hash, and every playout
// replayed op by op (long-form ops, on the view and on the full table).
// Run: npm test (in clients/ts, after npm run build)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import {
  GAMES, GAME_NAMES, OutOfSync, applyCompact, applyOps, dealIds, dealTable, dealView, genesisLink, nextLink,
  pileAt, scoreOf, stateHash, viewOfTable,
} from '../dist/index.js';

const vectors = JSON.parse(readFileSync(new URL('../../../protocol/vectors.json', import.meta.url), 'utf8'));
const { games, deals, playouts } = vectors.deals;

test('the vectors have deals and playouts of every game', () => {
  assert.deepEqual(Object.keys(games).sort(), [...GAME_NAMES].sort());
  for (const game of GAME_NAMES) {
    assert.ok(deals.filter((d) => d.game === game).length >= 4, game);
    assert.ok(playouts.filter((p) => p.game === game).length >= 3, game);
  }
});

test('game layouts match DEALS.md §1', () => {
  for (const game of GAME_NAMES) assert.deepEqual({ ...GAMES[game], piles: [...GAMES[game].piles] }, games[game]);
});

for (const d of deals) {
  test(`deal ${d.game} ${JSON.stringify(d.seed)}: table, view, score, state hash`, () => {
    const table = dealTable(d.game, d.seed);
    assert.deepEqual(table, d.table);
    assert.deepEqual(viewOfTable(d.game, table), d.view);
    assert.deepEqual(dealView(d.game, d.seed), d.view);
    assert.equal(scoreOf(d.view), d.score);
    assert.equal(stateHash(d.game, d.seed, d.status, table), d.state_hash);
  });
}

test('every deal uses every card exactly once', () => {
  for (const game of GAME_NAMES) {
    const ids = dealIds(game, 'cards-once');
    const all = [...ids.foundations.flat(), ...ids.tableau.flat(), ...GAMES[game].piles.flatMap((p) => ids[p])];
    assert.deepEqual(all.sort((a, b) => a - b), Array.from({ length: 52 * GAMES[game].decks }, (_, i) => i), game);
  }
});

test('a view never holds a face-down card', () => {
  for (const d of deals) {
    if (!('stock' in d.view)) continue;
    const expected = GAMES[d.game].stock_face_up ? ['count', 'top'] : ['count'];
    assert.deepEqual(Object.keys(d.view.stock).sort(), expected);
  }
  for (const p of playouts) {
    for (const step of p.after) {
      if ('stock' in step.view) assert.ok(!Array.isArray(step.view.stock));
      for (const op of step.ops) {
        // Only face-up cards travel: a card leaves the stock face up, and only Colorado reveals.
        if (op.op === 'reveal') assert.ok(GAMES[p.game].stock_face_up);
      }
    }
  }
});

for (const p of playouts) {
  test(`playout ${p.game} ${JSON.stringify(p.seed)} (${p.policy}, ${p.moves.length} moves): views and hashes`, () => {
    assert.equal(p.moves.length, p.after.length);
    assert.ok(p.moves.length > 0);
    let view = dealView(p.game, p.seed);
    let table = dealTable(p.game, p.seed);
    p.moves.forEach((move, i) => {
      const step = p.after[i];
      applyOps(view, step.ops, move);
      applyOps(table, step.ops, move);
      assert.deepEqual(view, step.view, `view after move ${i} (${move})`);
      assert.deepEqual(viewOfTable(p.game, table), step.view, `table after move ${i} (${move})`);
      assert.equal(scoreOf(view), step.score, `score after move ${i}`);
      assert.equal(stateHash(p.game, p.seed, step.status, table), step.state_hash, `state hash after move ${i}`);
      if (i < p.moves.length - 1) assert.equal(step.status, 'playing', `only the last move may end the game`);
      if (step.table !== undefined) assert.deepEqual(table, step.table, `full table after move ${i} (${move})`);
    });
  });

  test(`playout ${p.game} ${JSON.stringify(p.seed)} (${p.policy}): compact forms`, () => {
    // The v2 patch of each move (WEBSOCKET.md), applied as a client applies a patch frame.
    const view = dealView(p.game, p.seed);
    let status = 'playing';
    p.after.forEach((step, i) => {
      applyCompact(view, step.compact);
      if (step.compact.s !== undefined) status = step.compact.s;
      assert.deepEqual(view, step.view, `view after compact move ${i} (${p.moves[i]})`);
      assert.equal(status, step.status, `status after compact move ${i}`);
    });
  });

  if (p.chain !== undefined) {
    test(`playout ${p.game} ${JSON.stringify(p.seed)} (${p.policy}): hash chain`, () => {
      let link = genesisLink(p.chain.game_id, p.game, stateHash(p.game, p.seed, 'playing', dealTable(p.game, p.seed)));
      assert.equal(link, p.chain.genesis);
      p.after.forEach((step, i) => {
        link = nextLink(link, i + 1, p.moves[i], step.server_time, step.state_hash);
        assert.equal(link, step.hash, `link of version ${i + 1}`);
      });
    });
  }
}

test('the vectors have undo steps: back onto the stock, an undone redeal, undos in a row', () => {
  const undo = playouts.filter((p) => p.policy === 'last+undo');
  assert.deepEqual(undo.map((p) => p.game).sort(), [...GAME_NAMES].sort());
  const ops = undo.flatMap((p) => p.after.filter((_, i) => p.moves[i] === 'undo').flatMap((s) => s.ops));
  assert.ok(ops.some((op) => op.op === 'move' && op.to === 'stock'));
  assert.ok(ops.some((op) => op.op === 'redeals_left'));
  assert.ok(undo.every((p) => p.chain !== undefined && p.after.every((s) => s.table !== undefined)));
});

test('the playouts cover every kind of op and ending', () => {
  const seen = new Set();
  for (const p of playouts) {
    seen.add(`status:${p.after.at(-1).status}`);
    p.after.forEach((step, i) => {
      if (p.moves[i] === 'resign') seen.add('resign');
      for (const op of step.ops) {
        if (op.op === 'move') seen.add(`move:${op.from.replace(/\[\d+\]/, '')}>${op.to.replace(/\[\d+\]/, '')}`);
        if (op.op === 'reveal') seen.add(op.card === null ? 'reveal:null' : 'reveal:card');
        if (op.op === 'set') seen.add(op.cards.length ? 'set:cards' : 'set:empty');
      }
      if (step.ops.length > 1 && step.ops[1].op === 'move') seen.add('refill');
    });
  }
  for (const kind of [
    'move:stock>waste', 'move:stock>tableau', 'move:stock>foundation', 'move:tableau>foundation',
    'move:tableau>tableau', 'move:foundation>tableau', 'move:reserve>tableau', 'move:reserve>foundation',
    'move:waste>tableau', 'move:waste>foundation', 'move:bouquet>tableau', 'move:bouquet>foundation',
    'reveal:card', 'reveal:null', 'set:cards', 'set:empty', 'refill', 'resign',
    'status:won', 'status:stuck', 'status:resigned', 'status:playing',
  ]) assert.ok(seen.has(kind), kind);
});

test('applyOps rejects ops that do not fit the view', () => {
  const view = dealView('balcony', 'abc');
  assert.throws(() => applyOps(view, [{ op: 'move', from: 'tableau[0]', to: 'tableau[1]', card: 'KS' }]), OutOfSync);
  assert.throws(() => applyOps(dealView('balcony', 'abc'), [{ op: 'shuffle' }]), OutOfSync);
  assert.throws(() => pileAt(view, 'tableau[7]'), OutOfSync);
  assert.throws(() => pileAt(view, 'bouquet'), OutOfSync);
  const colorado = dealView('colorado', 'abc');
  assert.throws(() => applyOps(colorado, [{ op: 'move', from: 'stock', to: 'tableau[0]', card: 'AS' }]), OutOfSync);
  applyOps(colorado, [
    { op: 'move', from: 'stock', to: 'tableau[0]', card: 'KC' },
    { op: 'reveal', pile: 'stock', card: '6H' },
  ]);
  assert.deepEqual(colorado.stock, { count: 83, top: '6H' });
  assert.deepEqual(colorado.tableau[0], ['7S', 'KC']);
});

test('unknown games are rejected', () => {
  assert.throws(() => dealTable('klondike', 'abc'), RangeError);
  assert.throws(() => dealTable('toString', 'abc'), RangeError);
});
