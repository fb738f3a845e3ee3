// The compact patches of the protocol v2, applied by the SDK's GameCopy and applyCompact:
// every playout of protocol/vectors.json converted to compact patches must replay to the
// same views, statuses and scores; every op kind is covered; ops that do not fit are refused.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import {
  GameCopy, OutOfSync, applyCompact, cardInfo, cardLabel, compactPile, dealTable, dealView, expandMove, expandOps, expandPile,
  parseMove, stateHash, viewOfTable,
} from '../dist/index.js';
import { compactOp, compactPatch } from './compact.mjs';

const vectors = JSON.parse(readFileSync(new URL('../../../protocol/vectors.json', import.meta.url), 'utf8'));
const { playouts } = vectors.deals;

function snapshotMessage(gameId, game, view, version = 0) {
  return {
    type: 'snapshot', game_id: gameId,
    snapshot: { id: gameId, game, version, status: 'playing', score: 0, view, legal_moves: null, daily: null, assisted: false },
  };
}

test('pile codes and compact moves', () => {
  for (const [address, code] of [['foundation[0]', 'f0'], ['foundation[15]', 'f15'], ['tableau[19]', 't19'], ['reserve', 'r'], ['stock', 's'], ['waste', 'w'], ['bouquet', 'b']]) {
    assert.equal(compactPile(address), code);
    assert.equal(expandPile(code), address);
  }
  for (const bad of ['t', 'f01', 'x', 'tableau[0]', '', 's0']) assert.throws(() => expandPile(bad), OutOfSync, bad);
  assert.equal(expandMove('t3>f0'), 'tableau[3]>foundation[0]');
  assert.equal(expandMove('s>w'), 'stock>waste');
  for (const move of ['deal', 'redeal', 'resign', 'undo']) assert.equal(expandMove(move), move);
});

for (const p of playouts) {
  test(`playout ${p.game} ${JSON.stringify(p.seed)} as compact patches through a GameCopy`, () => {
    const copy = new GameCopy('g_test');
    copy.handle({ type: 'subscribed', game_id: 'g_test', role: 'spectator', version: 0, legal_moves: null });
    copy.handle(snapshotMessage('g_test', p.game, dealView(p.game, p.seed)));
    const table = dealTable(p.game, p.seed);
    let status = 'playing';
    const changes = [];
    copy.on('change', (event) => changes.push(event));
    p.moves.forEach((move, i) => {
      const step = p.after[i];
      const patch = compactPatch({
        gameId: 'g_test', version: i + 1, move, ops: step.ops,
        status: step.status !== status ? step.status : undefined,
        redealsBefore: copy.view.redeals_left, redealsAfter: step.view.redeals_left,
      });
      status = step.status;
      // The wire form survives msgpack: plain arrays and maps only.
      assert.equal(copy.handle({ type: 'patch', ...patch }), null);
      applyCompact(table, patch);
      const where = `move ${i} (${move})`;
      assert.deepEqual(copy.view, step.view, where);
      assert.equal(copy.version, i + 1, where);
      assert.equal(copy.status, step.status, where);
      assert.equal(copy.score, step.score, where);
      assert.deepEqual(viewOfTable(p.game, table), step.view, where);
      assert.equal(stateHash(p.game, p.seed, step.status, table), step.state_hash, where);
      assert.equal(changes.at(-1).move, move, where);
      assert.deepEqual(changes.at(-1).ops, step.ops.filter((op) => op.op !== 'redeals_left'), where);
    });
  });
}

test('the converted playouts use every compact op and the r field', () => {
  const seen = new Set();
  for (const p of playouts) {
    for (const step of p.after) {
      for (const op of step.ops) {
        const compact = compactOp(op);
        if (compact) seen.add(compact[0] === 'r' ? `r:${compact[1] === null ? 'nil' : 'card'}` : compact[0]);
      }
    }
  }
  assert.deepEqual([...seen].sort(), ['m', 'r:card', 'r:nil', 's']);
});

test('an undo of a redeal: set ops back and redeals_left from r', () => {
  const p = playouts.find((x) => x.game === 'matrimony' && x.moves.includes('redeal'));
  const at = p.moves.indexOf('redeal');
  const before = at === 0 ? dealView(p.game, p.seed) : p.after[at - 1].view;
  const after = structuredClone(p.after[at].view);
  // The undo's ops: a set of every pile the redeal changed, back to what it was (DIFF.md §4).
  const sets = p.after[at].ops.map((op) => ['s', compactPile(op.pile), before.tableau[Number(/\d+/.exec(op.pile)[0])]]);
  applyCompact(after, { m: 'undo', o: sets, r: before.redeals_left });
  assert.deepEqual(after, before);
});

test('an undo that puts cards back on the stock (Colorado: its top too)', () => {
  const view = dealView('colorado', 'abc');
  const original = structuredClone(view);
  const top = view.stock.top;
  applyCompact(view, { m: 't0>f0', o: [['m', 't0', 'f0', view.tableau[0][0]], ['m', 's', 't0', top], ['r', '6H']] });
  assert.deepEqual(view.stock, { count: original.stock.count - 1, top: '6H' });
  applyCompact(view, { m: 'undo', o: [['m', 't0', 's', top], ['m', 'f0', 't0', original.tableau[0][0]]] });
  assert.deepEqual(view, original);
});

test('patches out of order: ignored when old, resync when ahead, snapshot when they do not fit', () => {
  const copy = new GameCopy('g');
  assert.equal(copy.handle({ type: 'patch', g: 'g', v: 1, m: 'deal', o: [] }), null, 'no state yet: wait for the snapshot');
  copy.handle({ type: 'subscribed', game_id: 'g', role: 'owner', version: 3, legal_moves: ['deal'] });
  copy.handle(snapshotMessage('g', 'balcony', dealView('balcony', 'abc'), 3));
  assert.equal(copy.version, 3);
  assert.equal(copy.handle({ type: 'patch', g: 'g', v: 3, m: 'deal', o: [['m', 's', 'w', 'KS']] }), null);
  assert.equal(copy.version, 3);
  assert.equal(copy.handle({ type: 'patch', g: 'g', v: 5, m: 'deal', o: [] }), 'version');
  const errors = [];
  copy.on('error', (error) => errors.push(error));
  assert.equal(copy.handle({ type: 'patch', g: 'g', v: 4, m: 't0>t1', o: [['m', 't0', 't1', 'XX']] }), 'snapshot');
  assert.equal(copy.version, 3, 'a patch that does not fit changes nothing');
  assert.ok(errors[0] instanceof OutOfSync);
});

test('legal moves belong to their version: accepted before or after its patch', () => {
  const view = dealView('balcony', 'abc');
  const setup = (copy) => {
    copy.handle({ type: 'subscribed', game_id: 'g', role: 'owner', version: 0, legal_moves: ['deal'] });
    copy.handle(snapshotMessage('g', 'balcony', structuredClone(view)));
  };
  const patch = { g: 'g', v: 1, m: 'deal', o: [['m', 's', 'w', 'KS']] };
  const accepted = {
    type: 'accepted', move_id: 'm1', game_id: 'g', version: 1, applied_version: 1, duplicate: false,
    status: 'playing', score: 1, legal_moves: ['deal', 'waste>tableau[0]'], patch,
  };
  const a = new GameCopy('g');
  setup(a);
  a.handle(accepted);
  assert.equal(a.version, 1);
  assert.deepEqual(a.legalMoves, ['deal', 'waste>tableau[0]']);
  assert.deepEqual(a.view.waste, ['KS']);
  // Another tab: the patch frame, then later legal moves learnt for a further version.
  const b = new GameCopy('g');
  setup(b);
  b.handle({ type: 'accepted', ...accepted, version: 2, patch: null, duplicate: true });
  b.handle({ type: 'patch', ...patch });
  assert.equal(b.legalMoves, null, 'the legal moves of version 2 are not those of version 1');
});

test('compact ops that are not ops are refused', () => {
  for (const bad of [[['x']], [['m', 't0', 't1']], [['r']], [['s', 't0', 'KS']], ['m'], [null]]) {
    assert.throws(() => expandOps(bad), OutOfSync, JSON.stringify(bad));
  }
  const view = dealView('balcony', 'abc');
  assert.throws(() => applyCompact(view, { m: 'x', o: [], r: 3 }), OutOfSync, 'no redeals in Balcony');
});

test('move texts and card labels', () => {
  assert.deepEqual(parseMove('tableau[3]>foundation[0]'), { from: 'tableau[3]', to: 'foundation[0]' });
  assert.deepEqual(parseMove('stock > tableau[19]'), { from: 'stock', to: 'tableau[19]' });
  assert.equal(parseMove('deal'), null);
  assert.equal(parseMove('tableau[x]>waste'), null);
  assert.equal(cardLabel('10H'), '10♥');
  assert.equal(cardLabel('QS'), 'Q♠');
  assert.deepEqual(cardInfo('JD'), { rank: 'J', suit: 'D', symbol: '♦', red: true });
  assert.equal(cardInfo('1C'), null);
});
