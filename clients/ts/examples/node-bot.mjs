// A Node bot that plays one game to its end through the SDK.
// Usage (Node 22+; on Node 20 add --experimental-websocket):
//   node examples/node-bot.mjs http://127.0.0.1:8000 [game] [seed]
// It registers a player, starts a casual game, and plays: a move to a foundation if there is
// one, else another card move it has not just made, else deal/redeal, and resigns after
// 200 moves or when it only goes round in circles.

import { MoveError, SolitaireClient } from 'solitaire-sdk';

const [baseUrl = 'http://127.0.0.1:8000', gameName = 'balcony', seed] = process.argv.slice(2);
const client = new SolitaireClient({ baseUrl });
await client.register('bot');
const created = await client.rest.createGame(seed ? { game: gameName, seed } : { game: gameName });
const game = await client.open(created.id);
game.on('status', ({ status }) => console.log(`status: ${status}`));

const recent = [];
let moves = 0;
while (!game.isOver) {
  if (game.legalMoves === null) {
    await game.once('change'); // the legal moves of this version are on their way
    continue;
  }
  const fresh = game.legalMoves.filter((m) => !recent.includes(m));
  const move =
    fresh.find((m) => m.includes('>foundation')) ??
    fresh.find((m) => m.includes('>')) ??
    fresh.find((m) => m === 'deal' || m === 'redeal');
  try {
    await game.move(moves >= 200 || move === undefined ? 'resign' : move);
  } catch (error) {
    if (!(error instanceof MoveError)) throw error;
    console.log(`refused: ${error.code} (${error.message})`);
  }
  recent.push(move);
  if (recent.length > 6) recent.shift();
  moves += 1;
}
console.log(JSON.stringify({ game: created.id, name: gameName, status: game.status, score: game.score, moves }));
client.close();
