// Replays the recorded WebSocket sessions of protocol/sessions/*.json (format in
// protocol/sessions/README.md): every frame's hex must decode to its message, and a client
// copy driven by the server frames, with applyPatch of view.mjs, must hold the recorded state
// after each frame that changed it (and keep it after the others).
// Run: node --test protocol/js/test-sessions.mjs

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { decodeHex } from './msgpack-lite.mjs';
import { applyPatch, scoreOf } from './view.mjs';

const SESSIONS = join(dirname(fileURLToPath(import.meta.url)), '..', 'sessions');
const GAMES = ['empress_of_italy', 'colorado', 'gloucestershire', 'matrimony', 'balcony'];

const clone = (value) => JSON.parse(JSON.stringify(value));

/** The client's copy of one game (README.md, "Client state"). */
class ClientCopy {
  constructor() {
    this.role = null;
    this.version = null;
    this.status = null;
    this.score = null;
    this.view = null;
    this.legal_moves = null;
    this.later = new Map(); // version -> legal moves received before the copy got there
  }

  state() {
    const { version, status, score, view, legal_moves } = this;
    return clone({ version, status, score, view, legal_moves });
  }

  learnLegalMoves(version, legal) {
    if (version === this.version) this.legal_moves = [...legal];
    else if (this.version === null || version > this.version) this.later.set(version, [...legal]);
  }

  forgetOld() {
    for (const version of [...this.later.keys()]) if (version <= this.version) this.later.delete(version);
  }

  onPatch(patch) {
    if (this.version === null || patch.v <= this.version) return; // already have it
    assert.equal(patch.v, this.version + 1, 'a gap: the client would re-subscribe');
    const view = applyPatch(clone(this.view), patch);
    Object.assign(this, { view, version: patch.v, status: patch.s ?? this.status, score: scoreOf(view) });
    this.legal_moves = this.later.get(this.version) ?? null;
    if (this.legal_moves === null && this.role === 'owner' && this.status !== 'playing') this.legal_moves = [];
    this.forgetOld();
  }

  onMessage(message) {
    switch (message.type) {
      case 'subscribed':
        this.role = message.role;
        if (message.legal_moves !== null) this.learnLegalMoves(message.version, message.legal_moves);
        break;
      case 'snapshot': {
        const s = message.snapshot;
        Object.assign(this, clone({ version: s.version, status: s.status, score: s.score, view: s.view }));
        this.legal_moves = s.legal_moves === null ? null : [...s.legal_moves];
        this.forgetOld();
        break;
      }
      case 'patch':
        this.onPatch(message);
        break;
      case 'accepted':
        // The accepted carries the move's patch (none for a duplicate). `version` is the
        // game's version now (a duplicate's move produced the earlier `applied_version`);
        // the legal moves are those at `version`.
        if (message.patch !== null) this.onPatch(message.patch);
        this.learnLegalMoves(message.version, message.legal_moves);
        break;
      default:
        break;
    }
  }
}

const files = readdirSync(SESSIONS).filter((name) => name.endsWith('.json')).sort();

test('there is one recorded session per game', () => {
  assert.deepEqual(files, [...GAMES].sort().map((game) => `${game}.json`));
});

for (const file of files) {
  test(`session ${file} replays`, () => {
    const session = JSON.parse(readFileSync(join(SESSIONS, file), 'utf8'));
    assert.equal(session.format, 'solitaire-session/1');
    const copy = new ClientCopy();
    const replies = new Map(); // move_id -> number of replies
    let states = 0;
    for (const [index, event] of session.events.entries()) {
      const where = `${file} event ${index}`;
      if (!['send', 'recv'].includes(event.dir)) {
        assert.ok(['connect', 'disconnect', 'rest'].includes(event.dir), where);
        continue;
      }
      assert.deepEqual(decodeHex(event.hex), event.message, `${where}: hex and message differ`);
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
      if ((message.type === 'patch' ? message.g : message.game_id) === '<game_id>') copy.onMessage(message);
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
