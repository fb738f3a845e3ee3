// The SDK against a real server (run by tests/clients/test_ts_sdk_live.py with the server's
// base URL): plays all five games through a Connection and its GameCopy, with a reconnect
// while a move is made over REST, a lost reply (the `accepted` swallowed and the socket cut:
// the SDK re-sends the move with the same id and gets a duplicate), a spectator following
// each game, and typed errors. Checks every game's copy against the server's snapshot.
// Prints one JSON summary line; exits non-zero on any failure.
// Usage: node --experimental-websocket play.mjs http://127.0.0.1:PORT

import assert from 'node:assert/strict';

import { decode } from '@msgpack/msgpack';

import {
  AuthError, Connection, GAME_NAMES, MoveError, NotFoundError, RequestError, SolitaireClient, socketUrl,
} from '../../dist/index.js';

const baseUrl = process.argv[2];
assert.ok(baseUrl, 'usage: play.mjs BASE_URL');
const WAIT_MS = 10000;
const MOVES_PER_GAME = 24;

/** A WebSocket that can lose the next `accepted` and cut the socket, as a network failure would. */
class LossyWebSocket {
  static loseNextAccepted = false;
  static lost = 0;

  constructor(url) {
    this.ws = new WebSocket(url);
    this.onopen = this.onclose = this.onmessage = this.onerror = null;
    this.ws.onopen = (event) => this.onopen?.(event);
    this.ws.onclose = (event) => this.onclose?.(event);
    this.ws.onerror = (event) => this.onerror?.(event);
    this.ws.onmessage = (event) => {
      if (LossyWebSocket.loseNextAccepted && event.data instanceof ArrayBuffer) {
        const message = decode(new Uint8Array(event.data));
        if (message.type === 'accepted') {
          LossyWebSocket.loseNextAccepted = false;
          LossyWebSocket.lost += 1;
          this.ws.close(4001, 'lost');
          return;
        }
      }
      this.onmessage?.(event);
    };
  }

  get readyState() { return this.ws.readyState; }
  get binaryType() { return this.ws.binaryType; }
  set binaryType(value) { this.ws.binaryType = value; }
  send(data) { this.ws.send(data); }
  close(code, reason) { this.ws.close(code, reason); }
}

/** Resolves once `predicate()` holds, checked after each change of `copy` (bounded). */
function until(copy, predicate, what) {
  if (predicate()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for ${what}`)); }, WAIT_MS);
    const off = copy.on('change', () => {
      if (predicate()) { clearTimeout(timer); off(); resolve(); }
    });
  });
}

/** A move that makes progress: to a foundation first, then other card moves, then deal/redeal. */
function pickMove(legal, recent) {
  const fresh = legal.filter((m) => !recent.includes(m));
  return fresh.find((m) => m.includes('>foundation')) ?? fresh.find((m) => m.includes('>')) ?? fresh.find((m) => m === 'deal' || m === 'redeal') ?? legal[0];
}

async function checkAgainstServer(client, copy) {
  const snapshot = await client.rest.game(copy.id);
  assert.equal(copy.version, snapshot.version, 'version');
  assert.equal(copy.status, snapshot.status, 'status');
  assert.equal(copy.score, snapshot.score, 'score');
  assert.deepEqual(copy.view, snapshot.view, 'view');
  return snapshot;
}

const summary = { games: {}, reconnects: 0, duplicates: 0, spectatorChanges: 0, errors: [] };
const client = new SolitaireClient({ baseUrl, socket: { WebSocket: LossyWebSocket, reconnectFirstMs: 50, reconnectMaxMs: 500 } });
client.connection.on('connection', (event) => { if (event.state === 'open' && event.reconnect) summary.reconnects += 1; });
const player = await client.register();
assert.match(player.player_id, /^p_/);

// Typed errors from REST.
await assert.rejects(client.rest.game('g_nothing'), (e) => e instanceof NotFoundError && e.code === 'unknown_game' && e.status === 404);
await assert.rejects(client.rest.createGame({ game: 'balcony', seed: 'no spaces' }), (e) => e instanceof RequestError && e.code === 'invalid_seed');
summary.errors.push('unknown_game', 'invalid_seed');

const spectator = new Connection({ url: socketUrl(baseUrl) });
await spectator.connect();

for (const [index, name] of GAME_NAMES.entries()) {
  const created = await client.rest.createGame({ game: name, seed: `sdk-live-${index}` });
  const game = await client.open(created.id);
  assert.equal(game.role, 'owner');
  assert.deepEqual(game.view, created.view);
  const watched = await spectator.subscribe(created.id);
  assert.equal(watched.role, 'spectator');
  watched.on('change', (event) => { if (event.cause === 'patch') summary.spectatorChanges += 1; });

  if (index === 0) {
    // Typed move errors on the socket: illegal, stale, and a spectator who may not move.
    await assert.rejects(game.move('tableau[0]>tableau[0]'), (e) => e instanceof MoveError && e.code === 'illegal_move' && typeof e.details.reason_code === 'string');
    await assert.rejects(game.move(game.legalMoves[0], { version: game.version + 5 }), (e) => e instanceof MoveError && e.code === 'stale');
    await assert.rejects(watched.move(game.legalMoves[0]), (e) => e instanceof AuthError);
    summary.errors.push('illegal_move', 'stale', 'not_authenticated');
  }

  const recent = [];
  let moves = 0;
  while (game.status === 'playing' && moves < MOVES_PER_GAME) {
    await until(game, () => game.legalMoves !== null, 'legal moves');
    if (!game.legalMoves.length) break;
    const move = pickMove(game.legalMoves, recent);
    recent.push(move);
    if (recent.length > 4) recent.shift();

    if (moves === 3) {
      // A reconnect while the game moves on over REST: the copy resyncs by version.
      const before = summary.reconnects;
      client.connection.restart();
      const answer = await client.rest.move(game.id, { move, version: game.version, move_id: `rest-${index}` });
      await until(game, () => game.version === answer.version && summary.reconnects > before, 'the resync after a reconnect');
    } else if (moves === 6) {
      // A lost reply: the SDK re-sends the move with the same id after reconnecting.
      LossyWebSocket.loseNextAccepted = true;
      const accepted = await game.move(move);
      assert.equal(accepted.duplicate, true, 'the re-sent move is a duplicate');
      assert.equal(accepted.applied_version, accepted.version);
      summary.duplicates += 1;
    } else {
      const accepted = await game.move(move);
      assert.equal(accepted.duplicate, false);
      assert.equal(game.version, accepted.version, 'the copy holds the move when the promise resolves');
    }
    moves += 1;
  }
  if (game.status === 'playing') await game.move('resign');
  assert.notEqual(game.status, 'playing');
  const snapshot = await checkAgainstServer(client, game);
  assert.deepEqual(game.legalMoves, snapshot.legal_moves, 'legal moves');
  await until(watched, () => watched.version === game.version, 'the spectator');
  assert.deepEqual(watched.view, game.view, 'the spectator sees the same game');
  assert.equal(watched.status, game.status);
  assert.equal(watched.legalMoves, null);
  summary.games[name] = { moves: moves + 1, status: game.status, score: game.score, version: game.version };
}

const pong = await client.connection.ping();
assert.equal(typeof pong.server_time, 'number');
assert.equal(LossyWebSocket.lost, 5);
spectator.close();
client.close();
console.log(JSON.stringify(summary));
