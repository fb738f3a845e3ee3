// The web client: a thin view of the server's game. It draws what the server sends, sends
// the player's moves, and knows no rules: the legal moves it lights up are the server's.

import { ApiError, Socket, rest, socketUrl } from './net.mjs';
import { GAME_TITLES, layoutOf, renderTable } from './render.mjs';
import { OutOfSync, applyOps, cardsAt, clone, parseAddress, parseMove } from './view.mjs';

const TOKEN_KEY = 'patience.player';
const CARDS = { empress_of_italy: 208, colorado: 104, gloucestershire: 104, matrimony: 104, balcony: 52 };
/** After an `accepted` that is ahead of our view, how long to wait for its patch. */
const PATCH_GRACE_MS = 2500;
const MESSAGE_MS = 8000;
const DRAG_THRESHOLD_PX = 6;
/** A move with no answer after this long: the socket is taken for dead and restarted. */
const MOVE_REPLY_MS = 8000;

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

// -- state ---------------------------------------------------------------------------

const state = {
  player: loadPlayer(), // {player_id, token} or null
  gameId: null,
  game: null, // game name
  daily: null, // date of a ranked daily game
  role: null, // "owner" | "spectator" | null (not known yet)
  view: null,
  version: 0,
  status: null,
  score: 0,
  legal: null, // {moves, version}: the owner's legal moves at that version
  pending: null, // the move in flight: {move_id, move, version}
  connection: 'connecting', // connecting | online | offline | resyncing
  socketOpen: false,
  caughtUpAt: null, // version the current subscription must reach to be in sync
  selected: null, // pile address chosen as a move's source
  message: null, // {text, kind}
};

let messageTimer = null;
let graceTimer = null;
let resubscribeTimer = null;
let moveCounter = 0;
let replyTimer = null;

function loadPlayer() {
  try {
    const data = JSON.parse(localStorage.getItem(TOKEN_KEY) || 'null');
    return data && typeof data.token === 'string' ? data : null;
  } catch {
    return null;
  }
}

function savePlayer(player) {
  state.player = player;
  if (player) localStorage.setItem(TOKEN_KEY, JSON.stringify(player));
  else localStorage.removeItem(TOKEN_KEY);
}

/** The owner's legal moves at the version shown; null when not known (or a spectator). */
function currentLegalMoves() {
  if (state.role === 'spectator' || !state.legal || state.legal.version !== state.version) return null;
  return state.legal.moves;
}

// The read-only window onto the client, for tests and the curious.
Object.defineProperty(window, '__client', {
  value: Object.freeze({
    get version() {
      return state.view ? state.version : null;
    },
    get view() {
      return clone(state.view);
    },
    get status() {
      return state.status;
    },
    get score() {
      return state.score;
    },
    get legalMoves() {
      return clone(currentLegalMoves());
    },
    get connection() {
      return state.connection;
    },
    get gameId() {
      return state.gameId;
    },
    get game() {
      return state.game;
    },
    get role() {
      return state.role;
    },
    get pending() {
      return state.pending ? state.pending.move : null;
    },
    get message() {
      return state.message ? state.message.text : null;
    },
    get playerId() {
      return state.player ? state.player.player_id : null;
    },
  }),
  writable: false,
  configurable: false,
});

// -- messages --------------------------------------------------------------------------

function say(text, kind = 'info') {
  state.message = { text, kind };
  const node = $('message');
  node.textContent = text;
  node.dataset.kind = kind;
  node.hidden = false;
  clearTimeout(messageTimer);
  messageTimer = setTimeout(() => {
    node.hidden = true;
    state.message = null;
  }, MESSAGE_MS);
}

function clearMessage() {
  clearTimeout(messageTimer);
  state.message = null;
  $('message').hidden = true;
}

// -- drawing ----------------------------------------------------------------------------

function owner() {
  return state.role === 'owner';
}

function playing() {
  return state.status === 'playing';
}

/** Sources and targets to light up, from the server's legal moves only. */
function marks() {
  const legal = owner() && playing() ? currentLegalMoves() || [] : [];
  const sources = new Set();
  const targets = new Set();
  for (const text of legal) {
    const move = parseMove(text);
    if (!move) continue;
    sources.add(move.from);
    if (move.from === state.selected) targets.add(move.to);
  }
  if (owner() && playing() && (legal.includes('deal') || legal.includes('redeal'))) sources.add('stock');
  return { selected: state.selected, targets, sources };
}

function render() {
  const table = $('table');
  const hasGame = state.view !== null && state.game !== null;
  $('lobby').hidden = hasGame;
  $('status-bar').hidden = !hasGame;
  document.body.classList.toggle('spectating', state.role === 'spectator');
  document.body.classList.toggle('in-game', hasGame);
  renderConnection();
  if (!hasGame) {
    table.replaceChildren();
    return;
  }
  renderTable(table, state.game, state.view, marks());
  table.classList.toggle('over', !playing());
  $('game-title').textContent = GAME_TITLES[state.game] || state.game;
  const dailyTag = $('daily-tag');
  dailyTag.hidden = !state.daily;
  dailyTag.textContent = state.daily ? `daily ${state.daily}` : '';
  const role = $('role');
  role.hidden = state.role !== 'spectator';
  $('status').textContent = state.status || '–';
  $('status').dataset.status = state.status || '';
  $('score').textContent = String(state.score);
  $('score-of').textContent = ` / ${CARDS[state.game] || '?'}`;
  $('version').textContent = String(state.version);
  const legal = currentLegalMoves() || [];
  const hasDeal = ['empress_of_italy', 'balcony', 'matrimony'].includes(state.game);
  const buttons = {
    deal: { shown: hasDeal, enabled: legal.includes('deal') },
    redeal: { shown: state.game === 'matrimony', enabled: legal.includes('redeal') },
    resign: { shown: true, enabled: playing() && state.view !== null },
  };
  for (const [name, { shown, enabled }] of Object.entries(buttons)) {
    const button = $(name);
    button.hidden = !shown || !owner();
    button.disabled = !enabled || !state.socketOpen || state.pending !== null;
  }
  const link = gameLink(state.gameId);
  const anchor = $('game-link');
  anchor.href = link;
  anchor.textContent = owner() ? 'Spectator link' : 'Game link';
}

function renderConnection() {
  const node = $('connection');
  node.textContent = state.connection;
  node.dataset.state = state.connection;
}

function setConnection(value) {
  if (state.connection === value) return;
  state.connection = value;
  render();
}

function gameLink(gameId) {
  return `${location.origin}${location.pathname}#/game/${encodeURIComponent(gameId)}`;
}

// -- the game: snapshots, patches, legal moves --------------------------------------------

function takeSnapshot(snapshot) {
  state.gameId = snapshot.id;
  state.game = snapshot.game;
  if (snapshot.daily !== undefined) state.daily = snapshot.daily;
  state.view = clone(snapshot.view);
  state.version = snapshot.version;
  state.status = snapshot.status;
  state.score = snapshot.score;
  if (Array.isArray(snapshot.legal_moves)) {
    state.legal = { moves: snapshot.legal_moves, version: snapshot.version };
    if (state.role === null) state.role = 'owner';
  } else if (state.role === null && snapshot.legal_moves === null) {
    state.role = 'spectator';
  }
  keepSelection();
}

/** Keep the chosen source only while it still has a top card to move. */
function keepSelection() {
  if (state.selected && (!state.view || cardsAt(state.view, state.selected).length === 0)) state.selected = null;
}

function checkCaughtUp() {
  if (state.caughtUpAt !== null && state.view !== null && state.version >= state.caughtUpAt) {
    state.caughtUpAt = null;
    if (state.socketOpen) setConnection('online');
  }
}

/** After a change: an owner whose legal moves are behind the view asks for them again. */
function checkLegalMoves() {
  if (!owner() || state.pending !== null || state.caughtUpAt !== null) return;
  if (state.legal && state.legal.version === state.version) return;
  if (state.legal && state.legal.version > state.version) return; // our patch is on its way
  scheduleResubscribe(30);
}

function scheduleResubscribe(delay = 0) {
  clearTimeout(resubscribeTimer);
  resubscribeTimer = setTimeout(() => subscribe(true), delay);
}

/**
 * (Re)subscribe to the open game from our version (the server sends the patches we missed),
 * or, with `fresh` or no view yet, without one (the server sends a snapshot).
 */
function subscribe(resync, fresh = false) {
  clearTimeout(resubscribeTimer);
  if (!state.gameId || !state.socketOpen) return;
  const message = { type: 'subscribe', game_id: state.gameId };
  if (state.view !== null && !fresh) message.version = state.version;
  if (socket.send(message)) {
    state.caughtUpAt = Number.MAX_SAFE_INTEGER; // until `subscribed` says where "now" is
    if (resync) setConnection('resyncing');
  }
}

function onSubscribed(message) {
  if (message.game_id !== state.gameId) return;
  state.role = message.role;
  state.caughtUpAt = message.version;
  if (message.role === 'owner' && Array.isArray(message.legal_moves)) {
    state.legal = { moves: message.legal_moves, version: message.version };
  }
  if (state.view !== null && state.version === message.version) checkCaughtUp();
  render();
}

function onSnapshot(message) {
  takeSnapshot(message.snapshot);
  checkCaughtUp();
  render();
}

function onPatch(message) {
  if (state.view === null) return;
  if (message.to <= state.version) return; // already have it
  if (message.from !== state.version) {
    scheduleResubscribe(); // a gap: ask for what we missed
    return;
  }
  const view = clone(state.view);
  try {
    applyOps(view, message.ops, message.move);
  } catch (error) {
    if (!(error instanceof OutOfSync)) throw error;
    subscribe(true, true); // out of step: get a full snapshot
    return;
  }
  if (message.redeals_left !== undefined) view.redeals_left = message.redeals_left;
  state.view = view;
  state.version = message.to;
  state.status = message.status;
  state.score = message.score;
  keepSelection();
  checkCaughtUp();
  checkLegalMoves();
  render();
  if (state.status !== 'playing' && state.daily) loadLeaderboard();
}

function onAccepted(message) {
  if (state.pending && state.pending.move_id === message.move_id) state.pending = null;
  if (message.game_id !== state.gameId) return;
  if (message.duplicate) {
    scheduleResubscribe(); // legal moves may not be those of our version: ask again
  } else {
    state.legal = { moves: message.legal_moves, version: message.version };
  }
  if (message.version > state.version) {
    clearTimeout(graceTimer);
    const expected = message.version;
    graceTimer = setTimeout(() => {
      if (state.version < expected) subscribe(true);
    }, PATCH_GRACE_MS);
  }
  checkLegalMoves();
  render();
}

function onRejected(message) {
  if (state.pending && state.pending.move_id === message.move_id) state.pending = null;
  const text = message.message || message.code;
  say(message.code === 'illegal_move' ? text : `${text} (${message.code})`, 'error');
  state.selected = null;
  if (message.game_id === state.gameId && typeof message.version === 'number' && message.version !== state.version) {
    scheduleResubscribe();
  } else if (message.code === 'stale') {
    scheduleResubscribe();
  }
  if (message.code === 'not_authenticated') authenticate();
  render();
}

function onError(message) {
  if (message.in_reply_to === 'auth' && message.code === 'unauthorized') {
    savePlayer(null);
    say('Your player token is no longer valid: starting a new game makes a new player.', 'error');
  } else if (message.in_reply_to === 'subscribe' && message.code === 'unknown_game') {
    say('There is no such game (or it has expired).', 'error');
    state.caughtUpAt = null;
    if (state.socketOpen) setConnection('online');
  } else if (message.in_reply_to === 'subscribe' && message.code === 'store_unavailable') {
    say(message.message || 'The server cannot reach its store; retrying.', 'error');
    scheduleResubscribe(1000);
  } else {
    say(`${message.message || message.code} (${message.code})`, 'error');
  }
  render();
}

const HANDLERS = {
  authenticated: () => {},
  subscribed: onSubscribed,
  snapshot: (m) => m.game_id === state.gameId && onSnapshot(m),
  patch: (m) => m.game_id === state.gameId && onPatch(m),
  accepted: onAccepted,
  rejected: onRejected,
  unsubscribed: () => {},
  pong: () => {},
  error: onError,
};

// -- the socket ------------------------------------------------------------------------------

function authenticate() {
  if (state.player) socket.send({ type: 'auth', token: state.player.token });
}

const socket = new Socket(socketUrl(), {
  onopen(isReconnect) {
    state.socketOpen = true;
    authenticate();
    if (state.gameId) {
      subscribe(isReconnect);
      if (!isReconnect) setConnection('connecting');
      if (state.pending) transmit(state.pending); // its reply was lost with the old socket
    } else {
      setConnection('online');
    }
    render();
  },
  onmessage(message) {
    const handler = HANDLERS[message.type];
    if (handler) handler(message);
  },
  onclose() {
    state.socketOpen = false;
    render();
  },
  onstate(socketState) {
    if (socketState === 'offline') setConnection('offline');
    else if (socketState === 'connecting') setConnection(state.connection === 'connecting' ? 'connecting' : 'offline');
  },
});

// -- opening and starting games ---------------------------------------------------------------

async function ensurePlayer() {
  if (state.player) return state.player;
  const player = await rest('POST', '/v1/players', { body: {} });
  savePlayer(player);
  authenticate();
  return player;
}

/** A REST call as the player; an expired token is replaced by a new player once. */
async function asPlayer(method, path, body) {
  await ensurePlayer();
  try {
    return await rest(method, path, { token: state.player.token, body });
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'unauthorized') throw error;
    savePlayer(null);
    await ensurePlayer();
    return rest(method, path, { token: state.player.token, body });
  }
}

function resetGame() {
  if (state.gameId && state.socketOpen) socket.send({ type: 'unsubscribe', game_id: state.gameId });
  Object.assign(state, {
    gameId: null,
    game: null,
    daily: null,
    role: null,
    view: null,
    version: 0,
    status: null,
    score: 0,
    legal: null,
    pending: null,
    caughtUpAt: null,
    selected: null,
  });
}

function showGame(snapshot) {
  resetGame();
  state.role = Array.isArray(snapshot.legal_moves) ? 'owner' : 'spectator';
  takeSnapshot(snapshot);
  $('game-select').value = snapshot.game;
  if (state.socketOpen) subscribe(false);
  const hash = `#/game/${encodeURIComponent(snapshot.id)}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
  render();
  loadLeaderboard();
}

async function openGame(gameId) {
  if (gameId === state.gameId && state.view) return;
  try {
    const snapshot = await rest('GET', `/v1/games/${encodeURIComponent(gameId)}`, {
      token: state.player ? state.player.token : undefined,
    });
    showGame(snapshot);
  } catch (error) {
    if (error.code === 'unauthorized' && state.player) {
      savePlayer(null);
      return openGame(gameId);
    }
    say(error.code === 'unknown_game' ? 'There is no such game (or it has expired).' : error.message, 'error');
  }
}

async function startGame(event) {
  event.preventDefault();
  const game = $('game-select').value;
  const seed = $('seed-input').value.trim();
  clearMessage();
  try {
    const body = seed ? { game, seed } : { game };
    showGame(await asPlayer('POST', '/v1/games', body));
  } catch (error) {
    say(error.message, 'error');
  }
}

async function startDaily() {
  const game = $('game-select').value;
  clearMessage();
  try {
    showGame(await asPlayer('POST', `/v1/daily/${game}`, {}));
  } catch (error) {
    say(error.message, 'error');
  }
}

function route() {
  const params = new URLSearchParams(location.search);
  const m = /^#\/game\/([^/?#]+)/.exec(location.hash);
  const gameId = m ? decodeURIComponent(m[1]) : params.get('game');
  if (gameId) {
    openGame(gameId);
  } else if (state.gameId) {
    resetGame();
    render();
  }
}

// -- the leaderboard ----------------------------------------------------------------------------

let leaderboardRequest = 0;

async function loadLeaderboard() {
  const game = $('game-select').value;
  const request = ++leaderboardRequest;
  const rows = $('leaderboard-rows');
  const note = $('leaderboard-note');
  try {
    const daily = await rest('GET', `/v1/daily/${game}`);
    const board = await rest('GET', `/v1/leaderboards/${game}/${daily.date}?limit=20`);
    if (request !== leaderboardRequest) return;
    $('leaderboard-title').textContent = `${GAME_TITLES[game]}, ${daily.date}`;
    rows.replaceChildren(
      ...board.entries.map((entry) => {
        const tr = document.createElement('tr');
        if (state.player && entry.player_id === state.player.player_id) tr.className = 'me';
        const cells = [
          entry.rank,
          entry.player_id,
          `${entry.score}${entry.won ? ' ★' : ''}`,
          entry.moves,
          formatDuration(entry.elapsed_ms),
        ];
        for (const value of cells) {
          const td = document.createElement('td');
          td.textContent = String(value);
          tr.append(td);
        }
        return tr;
      }),
    );
    note.textContent = board.size === 0 ? 'No attempt yet today.' : `${board.size} attempts today.`;
  } catch (error) {
    if (request !== leaderboardRequest) return;
    rows.replaceChildren();
    note.textContent = `Leaderboard unavailable: ${error.message}`;
  }
}

function formatDuration(ms) {
  const seconds = Math.round((ms || 0) / 1000);
  const m = Math.floor(seconds / 60);
  return `${m}:${String(seconds % 60).padStart(2, '0')}`;
}

// -- moves: click then click, or drag and drop -----------------------------------------------------

function newMoveId() {
  moveCounter += 1;
  return `m${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}${moveCounter}`;
}

function sendMove(move) {
  state.selected = null;
  if (!owner()) return;
  if (state.pending) {
    say('Wait: the last move has not been answered yet.', 'info');
    render();
    return;
  }
  if (!state.socketOpen) {
    say('Offline: the move was not sent. Reconnecting…', 'error');
    render();
    return;
  }
  const pending = { move_id: newMoveId(), move, version: state.version };
  state.pending = pending;
  clearMessage();
  transmit(pending);
  render();
}

/** Send the pending move (again, after a reconnect: the same move_id is applied at most once). */
function transmit(pending) {
  const { move_id, move, version } = pending;
  socket.send({ type: 'move', game_id: state.gameId, move, version, move_id, client_time: Date.now() });
  clearTimeout(replyTimer);
  replyTimer = setTimeout(() => {
    if (state.pending === pending) socket.restart(); // reconnects, then sends it again
  }, MOVE_REPLY_MS);
}

function legalFrom(address) {
  return (currentLegalMoves() || []).filter((text) => text.startsWith(`${address}>`));
}

function canInteract() {
  return owner() && playing() && state.view !== null;
}

function onStockClick() {
  const legal = currentLegalMoves() || [];
  if (legal.includes('deal')) sendMove('deal');
  else if (legal.includes('redeal')) sendMove('redeal');
  else say('Nothing to deal.', 'info');
}

function onPileClick(address, onStockTopCard) {
  if (!canInteract()) return;
  if (address === 'stock' && !onStockTopCard && state.selected === null) {
    onStockClick();
    return;
  }
  if (state.selected === null) {
    if (cardsAt(state.view, address).length === 0) return;
    state.selected = address;
    if (legalFrom(address).length === 0) say('No legal move for that card.', 'info');
    render();
    return;
  }
  if (state.selected === address) {
    state.selected = null;
    render();
    return;
  }
  const move = `${state.selected}>${address}`;
  const legal = currentLegalMoves() || [];
  if (!legal.includes(move) && legalFrom(address).length > 0) {
    state.selected = address; // another card the player may move: choose it instead
    render();
    return;
  }
  sendMove(move); // legal, or the server says why not
}

let drag = null;
let suppressClick = false;

function onPointerDown(event) {
  if (event.button !== 0 || !canInteract()) return;
  const card = event.target.closest('.card.top');
  const pile = card && card.closest('[data-pile]');
  if (!pile) return;
  drag = { pointerId: event.pointerId, from: pile.dataset.pile, card, x: event.clientX, y: event.clientY, ghost: null, over: null };
}

function startDrag(event) {
  const rect = drag.card.getBoundingClientRect();
  const ghost = drag.card.cloneNode(true);
  ghost.classList.add('ghost');
  ghost.removeAttribute('data-testid');
  ghost.style.width = `${rect.width}px`;
  ghost.style.height = `${rect.height}px`;
  drag.dx = event.clientX - rect.left;
  drag.dy = event.clientY - rect.top;
  document.body.append(ghost);
  drag.ghost = ghost;
  state.selected = drag.from;
  render();
  document.body.classList.add('dragging');
}

function onPointerMove(event) {
  if (!drag || event.pointerId !== drag.pointerId) return;
  if (!drag.ghost) {
    if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_THRESHOLD_PX) return;
    startDrag(event);
  }
  event.preventDefault();
  drag.ghost.style.transform = `translate(${event.clientX - drag.dx}px, ${event.clientY - drag.dy}px)`;
  const over = pileAt(event.clientX, event.clientY);
  if (over !== drag.over) {
    document.querySelectorAll('.pile.hover').forEach((node) => node.classList.remove('hover'));
    if (over) document.querySelector(`[data-pile="${over}"]`)?.classList.add('hover');
    drag.over = over;
  }
}

function pileAt(x, y) {
  const node = document.elementFromPoint(x, y);
  const pile = node && node.closest('[data-pile]');
  return pile ? pile.dataset.pile : null;
}

function endDrag(event, drop) {
  if (!drag || event.pointerId !== drag.pointerId) return;
  const { ghost, from } = drag;
  drag = null;
  if (!ghost) return; // a click, handled by the click listener
  ghost.remove();
  document.body.classList.remove('dragging');
  document.querySelectorAll('.pile.hover').forEach((node) => node.classList.remove('hover'));
  suppressClick = true;
  setTimeout(() => {
    suppressClick = false;
  }, 0);
  const to = drop ? pileAt(event.clientX, event.clientY) : null;
  if (to && to !== from && parseAddress(to)) {
    sendMove(`${from}>${to}`); // legal or not: the server decides, and says why not
  } else {
    state.selected = null;
    render();
  }
}

function onTableClick(event) {
  if (suppressClick) {
    suppressClick = false;
    return;
  }
  const pile = event.target.closest('[data-pile]');
  if (!pile) {
    if (state.selected) {
      state.selected = null;
      render();
    }
    return;
  }
  onPileClick(pile.dataset.pile, Boolean(event.target.closest('.stock-top')));
}

// -- buttons and start-up -------------------------------------------------------------------------

let resignArmed = null;

function onResign() {
  const button = $('resign');
  if (resignArmed === null) {
    button.textContent = 'Really resign?';
    button.classList.add('armed');
    resignArmed = setTimeout(() => {
      resignArmed = null;
      button.textContent = 'Resign';
      button.classList.remove('armed');
    }, 4000);
    return;
  }
  clearTimeout(resignArmed);
  resignArmed = null;
  button.textContent = 'Resign';
  button.classList.remove('armed');
  sendMove('resign');
}

async function copyLink() {
  const link = gameLink(state.gameId);
  try {
    await navigator.clipboard.writeText(link);
    say('Link copied: anyone with it can watch this game.', 'info');
  } catch {
    say(link, 'info');
  }
}

function main() {
  const table = $('table');
  table.addEventListener('click', onTableClick);
  table.addEventListener('pointerdown', onPointerDown);
  window.addEventListener('pointermove', onPointerMove, { passive: false });
  window.addEventListener('pointerup', (event) => endDrag(event, true));
  window.addEventListener('pointercancel', (event) => endDrag(event, false));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && state.selected) {
      state.selected = null;
      render();
    }
  });
  $('new-game-form').addEventListener('submit', startGame);
  $('daily').addEventListener('click', startDaily);
  $('deal').addEventListener('click', () => sendMove('deal'));
  $('redeal').addEventListener('click', () => sendMove('redeal'));
  $('resign').addEventListener('click', onResign);
  $('copy-link').addEventListener('click', copyLink);
  $('game-select').addEventListener('change', loadLeaderboard);
  $('leaderboard-refresh').addEventListener('click', loadLeaderboard);
  window.addEventListener('hashchange', route);
  socket.start();
  render();
  route();
  loadLeaderboard();
}

main();
