// The SDK through a server restart (run by tests/clients/test_ts_sdk_live.py): plays a move,
// prints READY, and waits while the test stops the server (uvicorn closes the socket with
// 1012, "service restart") and starts another on the same port; the connection reconnects
// by itself, resyncs, and the next move goes through. Prints one JSON summary line.
// Usage: node --experimental-websocket restart.mjs http://127.0.0.1:PORT

import assert from 'node:assert/strict';

import { SolitaireClient } from '../../dist/index.js';

const baseUrl = process.argv[2];
const client = new SolitaireClient({ baseUrl });
const events = [];
client.connection.on('connection', (event) => { events.push(event); console.error('connection', JSON.stringify(event)); });
await client.register();
const created = await client.rest.createGame({ game: 'balcony', seed: 'sdk-restart' });
const game = await client.open(created.id);
await game.move(game.legalMoves[0]);

const reopened = new Promise((resolve) => {
  client.connection.on('connection', (event) => { if (event.state === 'open' && event.reconnect) resolve(); });
});
console.log('READY');
await reopened;
// The copy resubscribed with its version; once the legal moves of that version are back, play.
while (game.legalMoves === null) await game.once('change');
const accepted = await game.move(game.legalMoves[0]);
assert.equal(accepted.version, 2);
const snapshot = await client.rest.game(game.id);
assert.deepEqual(game.view, snapshot.view);
client.close();
const closes = events.filter((e) => e.code !== undefined).map((e) => e.code);
console.log(JSON.stringify({ closes, version: game.version, states: events.map((e) => e.state) }));
