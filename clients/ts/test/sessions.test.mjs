// Replays the recorded WebSocket sessions of protocol/sessions/*.json (format in
// protocol/sessions/README.md) through the SDK: every frame's hex must decode (with the SDK's
// msgpack) to its message, and the SDK's GameCopy, driven by the server frames, must hold the
// recorded state after each frame that changed it (and keep it after the others).
// Sessions recorded with the protocol v1 (long patches with from/to/ops, a separate patch for
// the mover) are converted to v2 frames by the pure functions of compact.mjs first.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import { decode } from '@msgpack/msgpack';

import { GameCopy, scoreOf } from '../dist/index.js';
import { compactPatch } from './compact.mjs';

const SESSIONS = new URL('../../../protocol/sessions/', import.meta.url);
const GAMES = ['empress_of_italy', 'colorado', 'gloucestershire', 'matrimony', 'balcony'];

const fromHex = (hex) => Uint8Array.from(hex.match(/../g) ?? [], (byte) => parseInt(byte, 16));

/** A v1 frame as the v2 server sends it (v2 frames pass unchanged). `copy` gives redeals_left before. */
function asV2(message, copy) {
  if (message.type === 'patch' && 'ops' in message) {
    const patch = compactPatch({
      gameId: message.game_id, version: message.to, move: message.move, ops: message.ops,
      status: message.status !== copy.status ? message.status : undefined,
      redealsBefore: copy.view?.redeals_left, redealsAfter: message.redeals_left,
    });
    return { type: 'patch', ...patch };
  }
  return message;
}

const gameIdOf = (message) => message.game_id ?? message.g;

const files = readdirSync(SESSIONS).filter((name) => name.endsWith('.json')).sort();

test('there is one recorded session per game', () => {
  assert.deepEqual(files, [...GAMES].sort().map((game) => `${game}.json`));
});

for (const file of files) {
  test(`session ${file} replays through the SDK's GameCopy`, () => {
    const session = JSON.parse(readFileSync(new URL(file, SESSIONS), 'utf8'));
    assert.match(session.format, /^solitaire-session\//);
    const copy = new GameCopy('<game_id>');
    const replies = new Map(); // move_id -> number of replies
    let states = 0;
    for (const [index, event] of session.events.entries()) {
      const where = `${file} event ${index}`;
      if (!['send', 'recv'].includes(event.dir)) {
        assert.ok(['connect', 'disconnect', 'rest'].includes(event.dir), where);
        continue;
      }
      assert.deepEqual(decode(fromHex(event.hex)), event.message, `${where}: hex and message differ`);
      const message = event.message;
      if (event.dir === 'send') {
        assert.ok(!('state' in event), where);
        if (message.type === 'move') replies.set(message.move_id, 0);
        continue;
      }
      if (message.type === 'accepted' || message.type === 'rejected') {
        assert.ok(replies.has(message.move_id), `${where}: a reply to no move`);
        replies.set(message.move_id, replies.get(message.move_id) + 1);
      }
      const before = copy.state();
      if (gameIdOf(message) === '<game_id>') {
        assert.equal(copy.handle(asV2(message, copy)), null, `${where}: the copy asks for a resync`);
      }
      if ('state' in event) {
        assert.deepEqual(copy.state(), event.state, `${where}: wrong client state`);
        assert.notDeepEqual(event.state, before, `${where}: a state that did not change`);
        assert.equal(event.state.score, scoreOf(event.state.view), where);
        states += 1;
      } else {
        assert.deepEqual(copy.state(), before, `${where}: the state changed but none is recorded`);
      }
    }
    for (const [moveId, count] of replies) assert.equal(count, 1, `${file}: move ${moveId} got ${count} replies`);
    assert.ok(states >= 15, `${file}: only ${states} states`);
    assert.notEqual(copy.status, 'playing', `${file}: the session ends with the game over`);
  });
}
