// A plain web page on the SDK: a new game of Balcony, its table as text, and one button per
// legal move. Serve clients/ts over HTTP (e.g. `python3 -m http.server -d clients/ts 8080`),
// run the server with `--cors-origins http://127.0.0.1:8080`, and open
// http://127.0.0.1:8080/examples/web/ (README.md, "Examples").

import { SolitaireClient, cardLabel } from '../../dist/browser/index.js';

const $ = (id) => document.getElementById(id);
let client = null;

function draw(game) {
  $('version').textContent = String(game.version);
  $('status').textContent = game.status;
  $('score').textContent = String(game.score);
  const v = game.view;
  const row = (name, cards) => `${name.padEnd(14)} ${cards.map(cardLabel).join(' ')}`;
  $('table').textContent = [
    ...v.foundations.map((p, i) => row(`foundation[${i}]`, p)),
    ...v.tableau.map((p, i) => row(`tableau[${i}]`, p)),
    row('reserve', v.reserve ?? []),
    row('waste', v.waste ?? []),
    `stock          ${v.stock ? v.stock.count : 0} cards`,
  ].join('\n');
  $('moves').replaceChildren(
    ...(game.isOver ? [] : game.legalMoves ?? []).concat(game.isOver ? [] : ['resign']).map((move) => {
      const button = document.createElement('button');
      button.textContent = move;
      button.onclick = () => game.move(move).catch((error) => alert(`${error.code}: ${error.message}`));
      return button;
    }),
  );
}

$('start').onclick = async () => {
  client?.close();
  client = new SolitaireClient({ baseUrl: $('server').value });
  client.connection.on('connection', ({ state }) => { $('connection').textContent = state; });
  await client.register();
  const created = await client.rest.createGame({ game: 'balcony' });
  const game = await client.open(created.id);
  game.on('change', () => draw(game));
  draw(game);
};
