// The web client: a thin view of the server's game. It draws what the server sends, sends
// the player's moves, and knows no rules: the legal moves it lights up are the server's.
// Networking (net.mjs, view.mjs) stays apart from drawing (render.mjs, animate.mjs) and the
// panels (panels.mjs); this module keeps the state and turns input into intents (moves).

import { wireAccount } from './account.mjs';
import { animateDeal, animateFrom, measure, motion, motionAllowed } from './animate.mjs';
import { finishMove, safeMove } from './automove.mjs';
import { canInteract, dragging, wireInput } from './input.mjs';
import { sound, wireSettings } from './settings.mjs';
import { Connection, RestClient, SolitaireError, applyCompact, expandMove, expandOps, socketUrl } from '/static/sdk/index.js';
import {
  onReplayKey,
  playerLabel,
  replayState,
  saveName,
  showMyGames,
  showPar,
  showReplay,
  wireReplayControls,
} from './pages.mjs';
import { describeMove, formatClock, outcomeText, renderRules, walkthroughText } from './panels.mjs';
import {
  GAME_TITLES,
  cardName,
  pileName,
  pileRows,
  redrawPiles,
  renderTable,
  updateHints,
} from './render.mjs';
import { OutOfSync, applyOps, cardsAt, clone, parseMove, scoreOf } from './view.mjs';
import { closeEndgame, updateEndgame, wireEndgame } from './endgame.mjs';
import { renderLanding } from './landing.mjs';
import { errorText } from './words.mjs';

/** Moves kept while earlier ones are in flight (fast play). */
const MAX_QUEUED_MOVES = 64;
const TOKEN_KEY = 'patience.player';
const SETTINGS_KEY = 'patience.settings';
const WALKTHROUGH_KEY = 'patience.walkthrough-done';
/** The pause before an auto-move or auto-finish move, so the eye can follow it. */
const AUTO_PLAY_MS = 140;
const PHONE = window.matchMedia('(max-width: 600px)');
const CARDS = { empress_of_italy: 208, colorado: 104, gloucestershire: 104, matrimony: 104, balcony: 52 };
/** After an `accepted` that is ahead of our view, how long to wait for its patch. */
const PATCH_GRACE_MS = 2500;
const MESSAGE_MS = 8000;
/** A move with no answer after this long: the socket is taken for dead and restarted. */
const MOVE_REPLY_MS = 8000;

/**
 * REST calls (the SDK's client). It holds the player's token and renews it once half its
 * lifetime has passed (protocol/ACCOUNTS.md); a renewed token is stored at once.
 */
const api = new RestClient({
  onToken: (token) => {
    if (state.player && token !== state.player.token) savePlayer({ ...state.player, token });
  },
});

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
  queued: [], // moves made while another was in flight, sent in turn once each is answered
  connection: 'connecting', // connecting | online | offline | resyncing
  socketOpen: false,
  caughtUpAt: null, // version the current subscription must reach to be in sync
  selected: null, // pile address chosen as a move's source
  ahead: null, // {view, version, move}: a legal card move drawn before the server's patch
  message: null, // {text, kind}
  focus: null, // the pile address the keyboard is on (the table's one tab stop)
  games: {}, // name -> GET /v1/games entry (summary and pile hints: the rules' one source)
  settings: loadSettings(), // {autoMove, autoFinish}
  undoable: 0, // moves still in effect that an undo would take back (null: not known yet)
  hint: null, // {from, to, version}: the server's suggested move, marked on the table
  hinting: false, // a hint request in flight
  autoPaused: false, // after an undo, auto-move and auto-finish wait for the player's next move
  page: 'game', // "game" | "me" | "replay": what the main area shows
  boardDaysBack: 0, // the leaderboard's day: 0 today, 1 yesterday (closed: replays and par)
  startedAt: null, // when this page saw the game's first move (the timer)
  endedAt: null,
  timings: { ready: null, clicks: [] }, // for benchmarks/web.py
};

api.setToken(state.player ? state.player.token : null);

/** Counts the views the state has held: the table knows which one it drew. */
let viewStamp = 0;
let messageTimer = null;
let graceTimer = null;
let resubscribeTimer = null;
let moveCounter = 0;
let replyTimer = null;

function loadSettings() {
  const defaults = { autoMove: false, autoFinish: true };
  try {
    return { ...defaults, ...JSON.parse(localStorage.getItem(SETTINGS_KEY) || '{}') };
  } catch {
    return defaults;
  }
}

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
  api.setToken(player ? player.token : null);
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
    get timings() {
      return clone(state.timings);
    },
    get animations() {
      return motion.played;
    },
    get sounds() {
      return sound.played;
    },
    get undoable() {
      return state.undoable;
    },
    get hint() {
      return clone(state.hint);
    },
    get replay() {
      return replayState();
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
  return { selected: state.selected, targets, sources, focus: focusAddress(), hint: shownHint() || walkthroughMove() };
}

/** The server's hint while it is for the table shown. */
function shownHint() {
  return state.hint && state.hint.version === state.version ? state.hint : null;
}

/** The pile with the table's tab stop: the one last focused, else the first pile. */
function focusAddress() {
  const rows = pileRows(state.game, PHONE.matches);
  const all = rows.flat();
  if (state.focus && all.includes(state.focus)) return state.focus;
  return all[0] || null;
}

/**
 * Redraw everything from the state. `ops` (a patch's) animate the cards they move; the
 * keyboard focus stays on the same pile.
 */
function render(ops = null) {
  const table = $('table');
  const onPage = state.page !== 'game';
  const hasGame = !onPage && state.view !== null && state.game !== null;
  $('lobby').hidden = hasGame || onPage;
  $('me-page').hidden = state.page !== 'me';
  $('replay-page').hidden = state.page !== 'replay';
  if (onPage) {
    $('daily-done').hidden = true;
  }
  $('status-bar').hidden = !hasGame;
  $('actions').hidden = !hasGame;
  $('share').hidden = !hasGame || !state.gameId;
  document.body.classList.toggle('spectating', state.role === 'spectator');
  document.body.classList.toggle('in-game', hasGame);
  renderConnection();
  if (!hasGame) {
    table.replaceChildren();
    $('outcome').hidden = true;
    $('walkthrough').hidden = true;
    closeEndgame();
    if (!onPage) renderLanding(landingHooks);
    return;
  }
  const focused = document.activeElement && table.contains(document.activeElement)
    ? document.activeElement.closest('[data-pile]')?.dataset.pile
    : null;
  drawTable(table, ops);
  if (focused && document.activeElement?.dataset?.pile !== focused) {
    table.querySelector(`[data-pile="${CSS.escape(focused)}"]`)?.focus({ preventScroll: true });
  }
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
  $('moves').textContent = String(state.version);
  renderTimer();
  renderOutcome();
  renderWalkthrough();
  updateEndgame(endgameState(), endgameHooks);
  const legal = currentLegalMoves() || [];
  const hasDeal = ['empress_of_italy', 'balcony', 'matrimony'].includes(state.game);
  const buttons = {
    deal: { shown: hasDeal, enabled: legal.includes('deal') },
    redeal: { shown: state.game === 'matrimony', enabled: legal.includes('redeal') },
    resign: { shown: true, enabled: playing() && state.view !== null },
    // Undo and hints are for casual games only (REST.md, "Undo" and "Hints"); a stuck
    // game is not final while a move is in effect.
    undo: { shown: !state.daily, enabled: undoPossible() },
    restart: { shown: !state.daily, enabled: true },
    hint: { shown: !state.daily, enabled: playing() && !state.hinting },
  };
  for (const [name, { shown, enabled }] of Object.entries(buttons)) {
    const button = $(name);
    button.hidden = !shown || !owner();
    button.disabled = !enabled || !state.socketOpen || state.pending !== null;
  }
  $('menu-restart').hidden = !owner() || Boolean(state.daily);
  const anchor = $('game-link');
  anchor.href = gameLink(state.gameId);
  anchor.textContent = owner() ? 'Spectator link' : 'Game link';
}

/**
 * Draw the table as cheaply as the change allows: the same view as drawn -> only the marks;
 * one patch further -> only the piles its ops touched (animated); anything else -> all.
 */
function drawTable(table, ops) {
  const options = { compact: PHONE.matches, hints: state.games[state.game]?.piles, fit: state.settings.cardSize || 'auto' };
  const drawn = table.dataset.drawn;
  const now = `${state.gameId}@${viewStamp}`;
  const current = marks();
  if (drawn === now && redrawPiles(table, state.game, shownView(), current, [], options)) return;
  if (ops && drawn === `${state.gameId}@${viewStamp - 1}`) {
    const before = measure(table, ops);
    const touched = new Set();
    for (const op of ops) {
      if (op.op === 'move') touched.add(op.from).add(op.to);
      else if (op.pile) touched.add(op.pile); // `redeals_left` has no pile: the info box follows
    }
    if (redrawPiles(table, state.game, shownView(), current, touched, options)) {
      table.dataset.drawn = now;
      animateFrom(table, before);
      return;
    }
  }
  renderTable(table, state.game, shownView(), current, options);
  table.dataset.drawn = now;
}

function renderTimer() {
  const end = state.endedAt ?? Date.now();
  $('timer').textContent = formatClock(state.startedAt === null ? 0 : end - state.startedAt);
}

let celebrated = null;

function renderOutcome() {
  const box = $('outcome');
  const text = playing() ? null : outcomeText(state.game, state.status, state.view, state.score, CARDS[state.game]);
  box.hidden = text === null;
  box.dataset.status = state.status || '';
  $('outcome-text').textContent = text || '';
  if (state.status === 'won' && celebrated !== state.gameId) {
    celebrated = state.gameId;
    celebrate();
  }
}

/** A short shower of suits over the table; nothing when the player asks for reduced motion. */
function celebrate() {
  const layer = $('celebration');
  if (!motionAllowed()) return;
  layer.replaceChildren();
  for (let i = 0; i < 36; i += 1) {
    const piece = document.createElement('span');
    piece.textContent = '♠♥♦♣'[i % 4];
    piece.className = i % 4 === 1 || i % 4 === 2 ? 'red' : '';
    piece.style.left = `${(i * 37) % 100}%`;
    piece.style.animationDelay = `${(i % 9) * 90}ms`;
    layer.append(piece);
  }
  layer.hidden = false;
  setTimeout(() => {
    layer.hidden = true;
    layer.replaceChildren();
  }, 2600);
}

/** The first game's walkthrough: one legal move to try, until the player dismisses it. */
function walkthroughMove() {
  if (!walkthroughShown()) return null;
  const legal = currentLegalMoves() || [];
  // A card going forward: home first, and never a foundation card going back.
  const cards = legal.map(parseMove).filter((move) => move && !move.from.startsWith('foundation'));
  const card = cards.find((move) => move.to.startsWith('foundation')) || cards[0];
  if (card) return card;
  return legal.includes('deal') || legal.includes('redeal') ? { from: 'stock', to: null } : null;
}

function walkthroughShown() {
  return owner() && playing() && localStorage.getItem(WALKTHROUGH_KEY) === null;
}

function renderWalkthrough() {
  const box = $('walkthrough');
  const move = walkthroughMove();
  box.hidden = move === null;
  if (move) $('walkthrough-text').textContent = walkthroughText(state.game, state.view, move);
}

function dismissWalkthrough() {
  localStorage.setItem(WALKTHROUGH_KEY, '1');
  render();
}

/** Say `text` to screen readers (the page's aria-live region). */
function announce(text) {
  const node = $('announcer');
  node.textContent = text;
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
  state.ahead = null;
  viewStamp += 2; // never "one patch further" than a drawn view: a snapshot is drawn whole
  state.version = snapshot.version;
  state.status = snapshot.status;
  state.score = snapshot.score;
  if (Array.isArray(snapshot.legal_moves)) {
    state.legal = { moves: snapshot.legal_moves, version: snapshot.version };
    if (state.role === null) state.role = 'owner';
  } else if (state.role === null && snapshot.legal_moves === null) {
    state.role = 'spectator';
  }
  if (snapshot.status !== 'playing' && state.endedAt === null) state.endedAt = Date.now();
  if (snapshot.version === 0) state.undoable = 0;
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
  onLive();
  scheduleAutoPlay();
}

/** Once the game is drawn and live: what waited for it (it goes first on the network). */
function onLive() {
  if (state.view === null || state.caughtUpAt !== null) return;
  noteReady();
  if (leaderboardDue) {
    leaderboardDue = false;
    loadLeaderboard();
  }
}

function onSnapshot(message) {
  const first = state.view === null;
  takeSnapshot(message.snapshot);
  checkCaughtUp();
  if (first) showOpened(message.snapshot, false);
  else render();
  onLive();
  scheduleAutoPlay();
}

/** A compact patch (a `patch` frame, or the one an `accepted` carries): version v-1 → v. */
function onPatch(patch) {
  if (state.view === null) return;
  if (patch.v <= state.version) return; // already have it
  if (patch.v !== state.version + 1) {
    scheduleResubscribe(); // a gap: ask for what we missed
    return;
  }
  const view = clone(state.view);
  let move;
  let ops;
  try {
    move = expandMove(patch.m);
    ops = expandOps(patch.o);
    applyCompact(view, patch);
  } catch (error) {
    if (!(error instanceof OutOfSync)) throw error;
    subscribe(true, true); // out of step: get a full snapshot
    return;
  }
  state.view = view;
  const ahead = state.ahead;
  dropAhead(true);
  // Drawn ahead: the table already shows this move, and the patch's piles are redrawn from
  // the server's view (a refill animates; the card moved is already in place).
  // Another move than the one drawn ahead (made elsewhere first): redraw it all.
  viewStamp += ahead && (ahead.version !== patch.v || ahead.move !== move) ? 2 : 1;
  state.version = patch.v;
  if (move === 'undo') state.autoPaused = true;
  if (state.undoable !== null) {
    if (move === 'undo') state.undoable = Math.max(state.undoable - 1, 0);
    else if (move !== 'resign') state.undoable += 1;
  }
  if (patch.s !== undefined) state.status = patch.s; // sent only when it changes
  if (state.status === 'playing') state.endedAt = null; // an undo out of a stuck game
  state.score = scoreOf(view); // the cards on the foundations
  if (state.startedAt === null) state.startedAt = Date.now();
  if (state.status !== 'playing' && state.endedAt === null) state.endedAt = Date.now();
  keepSelection();
  checkCaughtUp();
  checkLegalMoves();
  render(ops);
  noteTiming('confirmed');
  const said = describeMove(move, ops, view);
  const outcome = playing() ? '' : ` ${outcomeText(state.game, state.status, view, state.score, CARDS[state.game])}`;
  announce(`${said}${outcome}`);
  if (state.status !== 'playing' && state.daily) loadLeaderboard();
  scheduleAutoPlay();
}

function onAccepted(message) {
  if (state.pending && state.pending.move_id === message.move_id) state.pending = null;
  if (message.game_id !== state.gameId) return;
  if (message.duplicate) {
    scheduleResubscribe(); // legal moves may not be those of our version: ask again
  } else {
    state.legal = { moves: message.legal_moves, version: message.version };
    // The mover's socket gets no patch frame of its own move: the accepted carries it.
    if (message.patch) onPatch(message.patch);
    scheduleAutoPlay();
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
  sendQueued();
}

/** The next move the player made while the last one was in flight, now that it is answered. */
function sendQueued() {
  if (state.queued.length === 0 || state.pending) return;
  const move = state.queued.shift();
  if (owner() && playing()) sendMove(move);
  else state.queued = [];
}

function onRejected(message) {
  if (state.pending && state.pending.move_id === message.move_id) {
    state.pending = null;
    state.queued = []; // made on a table the server refused: not sent
    dropAhead(false);
  }
  say(errorText(message), 'error');
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
  } else if (message.code === 'token_revoked') {
    savePlayer(null);
    say('This player was signed out everywhere: starting a new game makes a new player.', 'error');
  } else if (message.in_reply_to === 'subscribe' && message.code === 'unknown_game') {
    say('There is no such game (or it has expired).', 'error');
    state.caughtUpAt = null;
    if (state.socketOpen) setConnection('online');
  } else if (message.in_reply_to === 'subscribe' && message.code === 'store_unavailable') {
    say(message.message || 'The server cannot reach its store; retrying.', 'error');
    scheduleResubscribe(1000);
  } else {
    say(errorText(message), 'error');
  }
  render();
}

const HANDLERS = {
  authenticated: () => {},
  subscribed: onSubscribed,
  snapshot: (m) => m.game_id === state.gameId && onSnapshot(m),
  patch: (m) => m.g === state.gameId && onPatch(m),
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

// The SDK's connection carries the frames (msgpack, reconnect with backoff, pings); the page
// keeps its own game state (moves drawn ahead of the server, animations) from the messages.
const socket = new Connection({ url: socketUrl(location.origin) });

function onSocketOpen(isReconnect) {
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
}

socket.on('connection', ({ state: socketState, reconnect }) => {
  if (socketState === 'open') {
    onSocketOpen(reconnect);
    return;
  }
  if (state.socketOpen) {
    state.socketOpen = false;
    render();
  }
  if (socketState === 'offline') setConnection('offline');
  else if (socketState === 'connecting') setConnection(state.connection === 'connecting' ? 'connecting' : 'offline');
});
socket.on('message', (message) => {
  const handler = HANDLERS[message.type];
  if (handler) handler(message);
});

// -- opening and starting games ---------------------------------------------------------------

async function ensurePlayer() {
  if (state.player) return state.player;
  const player = await api.request('POST', '/v1/players', { body: {} });
  savePlayer(player);
  authenticate();
  return player;
}

/** A REST call as the player (the SDK renews the token when due); an expired or revoked
 * token is replaced by a new player once. */
async function asPlayer(method, path, body) {
  await ensurePlayer();
  try {
    return await api.request(method, path, { body });
  } catch (error) {
    const lost = ['unauthorized', 'token_revoked'];
    if (!(error instanceof SolitaireError) || !lost.includes(error.code)) throw error;
    savePlayer(null);
    await ensurePlayer();
    return api.request(method, path, { body });
  }
}

/** What the pages need of the player: who, registering with a name, calls as the player. */
const session = {
  player: () => state.player,
  async register(name) {
    const player = await api.request('POST', '/v1/players', { body: name ? { name } : {} });
    savePlayer({ player_id: player.player_id, token: player.token });
    authenticate();
    return player;
  },
  asPlayer: (method, path, body) => asPlayer(method, path, body),
  /** This device becomes `player` (a transfer code was redeemed). */
  adopt(player) {
    savePlayer(player);
    authenticate();
  },
  /** The player is gone (signed out everywhere, or deleted): the next game makes a new one. */
  forget() {
    savePlayer(null);
  },
  refresh: () => showMyGames(session),
};

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
    queued: [],
    caughtUpAt: null,
    selected: null,
    ahead: null,
    startedAt: null,
    endedAt: null,
    undoable: null,
    hint: null,
    hinting: false,
    autoPaused: false,
  });
  clearTimeout(autoPlayTimer);
}

/** A game created or resumed over REST: show its snapshot, follow it over the socket. */
function showGame(snapshot, { deal = false } = {}) {
  resetGame();
  state.role = Array.isArray(snapshot.legal_moves) ? 'owner' : 'spectator';
  takeSnapshot(snapshot);
  if (state.socketOpen) subscribe(false);
  showOpened(snapshot, deal);
}

/** What follows the first snapshot of a game, from REST or from the socket. */
function showOpened(snapshot, deal) {
  $('daily-done').hidden = true;
  closeMenu();
  if (snapshot.version > 0) state.startedAt = Date.now();
  $('game-select').value = snapshot.game;
  const hash = `#/game/${encodeURIComponent(snapshot.id)}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
  render();
  if (deal) animateDeal($('table'));
  announce(`${GAME_TITLES[snapshot.game]}: ${pileRows(snapshot.game).flat().length} piles. Tab to the table; arrow keys move between piles.`);
  leaderboardDue = true; // once the game is drawn and live: it goes first
  if (snapshot.version > 0) loadStartTime(snapshot.id);
}

/** A resumed game's timer runs from its first move (the log's server time). */
async function loadStartTime(gameId) {
  try {
    const log = await api.request('GET', `/v1/games/${encodeURIComponent(gameId)}/log`, {
      token: state.player ? state.player.token : undefined,
    });
    if (gameId === state.gameId && log.moves && state.version === log.moves.length) {
      state.undoable = log.next ? null : inEffect(log.moves.map((entry) => entry.move));
      render();
    }
    const first = log.moves && log.moves[0];
    if (gameId === state.gameId && first && typeof first.server_time === 'number') {
      state.startedAt = first.server_time;
      const last = log.moves[log.moves.length - 1];
      if (!playing() && last) state.endedAt = last.server_time;
      renderTimer();
    }
  } catch {
    // The timer then runs from the moment the game was opened here.
  }
}

/** Moves an undo could still take back: each move pushed, each undo pops one (REST.md "Undo"). */
function inEffect(moves) {
  let count = 0;
  for (const move of moves) count = move === 'undo' ? Math.max(count - 1, 0) : count + 1;
  return count;
}

/**
 * Open a game by its id (a link): subscribing without a version brings its snapshot over
 * the socket (WEBSOCKET.md), as the owner when the socket is authenticated as its player.
 */
function openGame(gameId) {
  if (gameId === state.gameId) return; // open, or on its way
  resetGame();
  state.gameId = gameId;
  if (state.socketOpen) subscribe(false); // else when the socket opens
  render();
}

async function startGame(event) {
  event.preventDefault();
  const game = $('game-select').value;
  const seed = $('seed-input').value.trim();
  clearMessage();
  try {
    const body = seed ? { game, seed } : { game };
    showGame(await asPlayer('POST', '/v1/games', body), { deal: true });
  } catch (error) {
    say(errorText(error), 'error');
  }
}

/** A new game of `game` (the landing's and the end dialog's "New game"): a random deal. */
async function playNew(game) {
  if (game) $('game-select').value = game;
  $('seed-input').value = '';
  clearMessage();
  try {
    showGame(await asPlayer('POST', '/v1/games', { game: $('game-select').value }), { deal: true });
  } catch (error) {
    say(errorText(error), 'error');
  }
}

/** Restart this deal: a new casual game on the same seed, recorded as its restart. */
async function restartGame() {
  if (!state.gameId || state.daily || !owner()) return;
  clearMessage();
  try {
    const snapshot = await asPlayer('POST', `/v1/games/${encodeURIComponent(state.gameId)}/restart`, {});
    showGame(snapshot, { deal: true });
    announce(`${GAME_TITLES[snapshot.game]}: the same deal again, from the start.`);
  } catch (error) {
    say(errorText(error), 'error');
  }
}

/** An undo is possible: a casual game being played or stuck, with a move in effect. */
function undoPossible() {
  return (playing() || state.status === 'stuck') && !state.daily && state.undoable !== 0;
}

function endgameState() {
  return {
    gameId: state.gameId,
    game: state.game,
    daily: state.daily,
    status: state.status,
    score: state.score,
    total: CARDS[state.game],
    moves: state.version,
    elapsedMs: state.startedAt === null ? 0 : (state.endedAt ?? Date.now()) - state.startedAt,
    owner: owner(),
    undoable: state.undoable,
  };
}

const endgameHooks = {
  newGame: (game) => playNew(game),
  restart: () => restartGame(),
  undo: () => onUndo(),
  daily: (game) => {
    if (game) $('game-select').value = game;
    startDaily();
  },
  board: () => {
    loadLeaderboard();
    document.getElementById('leaderboard')?.scrollIntoView({ block: 'nearest' });
    document.getElementById('leaderboard-heading')?.focus?.();
  },
  asPlayer: (method, path) => asPlayer(method, path),
};

const landingHooks = {
  play: (game) => playNew(game),
  daily: (game) => endgameHooks.daily(game),
  api,
};

/** Tries of a daily whose deal is still being chosen (503 daily_not_ready) before giving up. */
const DAILY_NOT_READY_TRIES = 5;

async function startDaily(event, tries = DAILY_NOT_READY_TRIES) {
  const game = $('game-select').value;
  clearMessage();
  try {
    const snapshot = await asPlayer('POST', `/v1/daily/${game}`, {});
    if (snapshot.status === 'playing') {
      showGame(snapshot, { deal: snapshot.version === 0 });
    } else {
      showDailyDone(snapshot);
    }
  } catch (error) {
    if (error instanceof SolitaireError && error.code === 'daily_not_ready' && tries > 1) {
      say("Today's daily is being dealt: ready in a few seconds, trying again by itself.", 'info');
      const wait = error.retryAfterMs || 2000;
      setTimeout(() => startDaily(event, tries - 1), wait);
      return;
    }
    say(errorText(error), 'error');
  }
}

/** Today's attempt is over: say so (and when the next one opens) instead of reopening it. */
function showDailyDone(snapshot) {
  if (state.gameId) {
    resetGame();
    history.replaceState(null, '', '#/');
  }
  closeMenu();
  const title = GAME_TITLES[snapshot.game];
  $('daily-done-title').textContent = `You have played today's ${title} daily`;
  $('daily-done-text').textContent = `${outcomeText(snapshot.game, snapshot.status, snapshot.view, snapshot.score, CARDS[snapshot.game])} One ranked attempt a day: the next ${title} daily opens in ${formatClock(nextDailyMs())}.`;
  $('daily-done').hidden = false;
  $('daily-done-view').onclick = () => {
    location.hash = `#/game/${encodeURIComponent(snapshot.id)}`;
  };
  $('daily-done-replay').href = `#/replay/${encodeURIComponent(snapshot.id)}`;
  render();
  $('lobby').hidden = true;
  loadLeaderboard();
}

function route() {
  const params = new URLSearchParams(location.search);
  const m = /^#\/game\/([^/?#]+)/.exec(location.hash);
  const gameId = m ? decodeURIComponent(m[1]) : params.get('game');
  const replayMatch = /^#\/replay\/([^/?#]+)/.exec(location.hash);
  const parMatch = /^#\/par\/([a-z_]+)\/(\d{4}-\d{2}-\d{2})$/.exec(location.hash);
  const page = location.hash === '#/me' ? 'me' : replayMatch || parMatch ? 'replay' : 'game';
  if (page !== 'game') {
    if (state.gameId) resetGame();
    state.page = page;
    closeMenu();
    render();
    if (page === 'me') showMyGames(session);
    else if (replayMatch) showReplay(decodeURIComponent(replayMatch[1]), state.player?.token);
    else showPar(parMatch[1], parMatch[2]);
    document.getElementById(page === 'me' ? 'me-heading' : 'replay-heading').focus({ preventScroll: true });
    return;
  }
  state.page = 'game';
  if (gameId) {
    openGame(gameId);
  } else if (state.gameId) {
    resetGame();
    render();
  } else {
    render();
  }
}

// -- the leaderboard ----------------------------------------------------------------------------

let leaderboardRequest = 0;
let leaderboardDue = false;

async function loadLeaderboard() {
  const game = $('game-select').value;
  const request = ++leaderboardRequest;
  const rows = $('leaderboard-rows');
  const note = $('leaderboard-note');
  const back = state.boardDaysBack;
  // The title follows the game chosen at once, whatever the board's answer.
  $('leaderboard-title').textContent = GAME_TITLES[game];
  try {
    const today = await api.request('GET', `/v1/daily/${game}`);
    nextDailyAt = Date.now() + today.seconds_to_next * 1000;
    renderCountdown();
    renderProof(today);
    const daily = back ? await api.request('GET', `/v1/daily/${game}/${dayBefore(today.date)}`) : today;
    const board = await api.request('GET', `/v1/leaderboards/${game}/${daily.date}?limit=20`, {
      token: state.player ? state.player.token : undefined,
    });
    if (request !== leaderboardRequest) return;
    $('leaderboard-title').textContent = `${GAME_TITLES[game]}, ${daily.date}`;
    const dayButton = $('board-day');
    dayButton.textContent = back ? "Today's board" : "Yesterday's board";
    dayButton.setAttribute('aria-pressed', String(Boolean(back)));
    const par = $('par-link');
    par.hidden = !(daily.closed && daily.par);
    par.href = `#/par/${game}/${daily.date}`;
    par.textContent = `Par replay (${daily.date})`;
    rows.replaceChildren(...board.entries.map((entry) => leaderboardRow(entry, daily)));
    const when = back ? 'that day' : 'today';
    note.textContent = board.size === 0 ? `No attempt ${when}.` : `${board.size} attempts ${when}.`;
  } catch (error) {
    if (request !== leaderboardRequest) return;
    rows.replaceChildren();
    note.textContent =
      error instanceof SolitaireError && error.code === 'daily_not_ready'
        ? `Today's ${GAME_TITLES[game]} daily is being dealt: ready in a few seconds.`
        : `Leaderboard unavailable: ${errorText(error)}`;
    if (error instanceof SolitaireError && error.code === 'daily_not_ready') {
      setTimeout(() => request === leaderboardRequest && loadLeaderboard(), error.retryAfterMs || 2000);
    }
  }
}

function leaderboardRow(entry, daily) {
  const tr = document.createElement('tr');
  if (state.player && entry.player_id === state.player.player_id) tr.className = 'me';
  const cells = [
    entry.rank,
    playerLabel(entry.name, entry.player_id),
    `${entry.score}${entry.won ? ' ★' : ''}`,
    entry.moves,
    formatDuration(entry.elapsed_ms),
  ];
  for (const value of cells) {
    const td = document.createElement('td');
    td.textContent = String(value);
    tr.append(td);
  }
  tr.children[1].title = tr.children[1].textContent;
  const td = document.createElement('td');
  // Open days show only the caller's own game (and its replay waits for the close).
  if (entry.game_id) {
    const link = document.createElement('a');
    link.href = `#/replay/${encodeURIComponent(entry.game_id)}`;
    link.textContent = 'Replay';
    link.setAttribute('aria-label', `Replay of ${cells[1]}'s game${daily.closed ? '' : ' (after the close)'}`);
    td.append(link);
  }
  tr.append(td);
  return tr;
}

/** Whether today's deal is proven winnable, else the solver's best score on it. */
function renderProof(daily) {
  const node = $('daily-proof');
  if (daily.winnable) node.textContent = "Today's deal is proven winnable: the solver found a win.";
  else if (typeof daily.proven_score === 'number') {
    node.textContent = `Today's deal: the solver's best is ${daily.proven_score} of ${daily.total_cards} cards home (no win proven).`;
  } else node.textContent = '';
}

function dayBefore(date) {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() - 1);
  return day.toISOString().slice(0, 10);
}

let nextDailyAt = null;

/** Milliseconds to the next daily: the server's count, else the next 00:00 UTC. */
function nextDailyMs() {
  if (nextDailyAt !== null) return Math.max(nextDailyAt - Date.now(), 0);
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();
}

function renderCountdown() {
  const left = nextDailyMs();
  $('daily-countdown').textContent = formatClock(left);
  if (left === 0 && nextDailyAt !== null) {
    nextDailyAt = null;
    loadLeaderboard(); // a new day: its board and its count
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

/** Record how long from a click's event to the DOM showing its effect (benchmarks/web.py). */
const clickTiming = { startedAt: null, moveAt: null };

function noteTiming(kind) {
  const at = kind === 'select' ? clickTiming.startedAt : clickTiming.moveAt;
  if (at === null) return;
  if (kind === 'confirmed') clickTiming.moveAt = null;
  if (kind === 'select') clickTiming.startedAt = null;
  const clicks = state.timings.clicks;
  clicks.push({ kind, game: state.game, ms: performance.now() - at });
  if (clicks.length > 500) clicks.shift();
}

function noteReady() {
  if (state.timings.ready === null && state.view !== null && state.connection === 'online') {
    state.timings.ready = performance.now();
  }
}

function sendMove(move, { auto = false } = {}) {
  state.selected = null;
  if (!owner()) return;
  if (!auto && move !== 'undo') state.autoPaused = false; // the player plays on: so may auto-play
  if (state.pending) {
    // Made while the last move is in flight (fast play): it goes once those before it are
    // answered, in the order made (up to 64: a player outrunning that many answers
    // is not waiting for them).
    if (auto || state.queued.length >= MAX_QUEUED_MOVES) return;
    state.queued.push(move);
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
  const ops = showAhead(move);
  render(ops);
  if (ops) noteTiming('move');
}

/**
 * A legal card move is drawn at once, before the server's patch: the card goes where the
 * server said it may go. The server's patch (refills included) then redraws those piles;
 * a refusal puts the card back. Nothing else runs ahead of the server.
 */
function showAhead(move) {
  const parsed = parseMove(move);
  if (!parsed || !(currentLegalMoves() || []).includes(move)) return null;
  const cards = cardsAt(state.view, parsed.from);
  if (!cards.length) return null;
  const ops = [{ op: 'move', from: parsed.from, to: parsed.to, card: cards[cards.length - 1] }];
  try {
    state.ahead = { view: applyOps(clone(state.view), ops), version: state.version + 1, move };
  } catch (error) {
    if (!(error instanceof OutOfSync)) throw error;
    return null;
  }
  viewStamp += 1;
  return ops;
}

/** The view to draw: the one running ahead of the server, else the server's. */
function shownView() {
  return state.ahead ? state.ahead.view : state.view;
}

/** The server has answered for the move drawn ahead (patch or refusal): draw its view. */
function dropAhead(patched) {
  if (!state.ahead) return;
  state.ahead = null;
  if (!patched) viewStamp += 2; // drawn ahead and refused: redraw it all
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

// -- playing by itself: auto-move and auto-finish, one move at a time ----------------------

let autoPlayTimer = null;

/** When the settings allow and nothing is in flight, play the next safe (or finishing) move. */
function scheduleAutoPlay() {
  clearTimeout(autoPlayTimer);
  if (!state.settings.autoMove && !state.settings.autoFinish) return;
  autoPlayTimer = setTimeout(autoPlay, motionAllowed() ? AUTO_PLAY_MS : 0);
}

function autoPlay() {
  if (!canInteract() || state.pending || state.caughtUpAt !== null || state.selected || dragging()) return;
  if (state.autoPaused) return; // after an undo: never play the undone move again by itself
  const legal = currentLegalMoves();
  if (!legal) return;
  const move =
    (state.settings.autoFinish && finishMove(state.view, legal)) ||
    (state.settings.autoMove && safeMove(state.game, state.view, legal)) ||
    null;
  if (move) sendMove(move, { auto: true });
}

// -- buttons and start-up -------------------------------------------------------------------------

function onUndo() {
  if (!owner() || !state.view || !undoPossible()) return;
  sendMove('undo'); // an ordinary move: the server's patch takes the table back (animated)
}

const HINT_REFUSALS = {
  hints_busy: 'The hint solver is busy right now: try again in a moment.',
  hints_ranked: 'No hints in a ranked daily: this one is all yours.',
  game_over: 'The game is over: no hint needed.',
};

/** Ask the server (its solver) for a move; mark it and say the estimated chance of winning. */
async function onHint() {
  if (!canInteract() || state.daily || state.hinting) return;
  const gameId = state.gameId;
  state.hinting = true;
  render();
  try {
    const answer = await asPlayer('POST', `/v1/games/${encodeURIComponent(gameId)}/hint`, {});
    if (gameId !== state.gameId) return;
    if (answer.version !== state.version) {
      say('The table changed while the hint was being worked out: ask again.', 'info');
      return;
    }
    const card = parseMove(answer.move);
    state.hint = card ? { ...card, version: answer.version } : { from: 'stock', to: null, version: answer.version };
    const chance = `Estimated chance of winning from here: ${Math.round(answer.win_chance * 100)} % (${answer.samples} samples).`;
    const what = card ? hintWords(card) : `Hint: ${answer.move === 'deal' ? 'deal from the stock' : answer.move}.`;
    say(`${what} ${chance}`, 'info');
    announce(`${what} ${chance}`);
  } catch (error) {
    if (!(error instanceof SolitaireError)) throw error;
    let text = HINT_REFUSALS[error.code] || `No hint: ${error.message}`;
    if (error.code === 'rate_limited') {
      const wait = Math.ceil((error.retryAfterMs || 1000) / 1000);
      text = `Too many hints for now: try again in ${wait} s.`;
    }
    say(text, 'error');
  } finally {
    state.hinting = false;
    render();
  }
}

function hintWords(move) {
  const cards = cardsAt(state.view, move.from);
  const card = cards.length ? `the ${cardName(cards[cards.length - 1])}` : 'the top card';
  return `Hint: move ${card} from ${pileName(move.from)} to ${pileName(move.to)} (marked).`;
}

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
  if (!state.gameId) {
    say('There is no game to link to yet: start one first.', 'error');
    return;
  }
  const link = gameLink(state.gameId);
  try {
    await navigator.clipboard.writeText(link);
    say('Link copied: anyone with it can watch this game.', 'info');
  } catch {
    say(link, 'info');
  }
}

function closeMenu() {
  document.body.classList.remove('menu-open');
  $('menu-toggle').setAttribute('aria-expanded', 'false');
}

/** The games' summaries and pile hints (GET /v1/games): the rules panel's and labels' source. */
async function loadGames() {
  try {
    const { games } = await api.request('GET', '/v1/games');
    state.games = Object.fromEntries(games.map((game) => [game.name, game]));
    updateHints($('table'), state.games[state.game]?.piles);
  } catch (error) {
    say(`The rules could not be loaded: ${error.message}`, 'error');
  }
}

function openRules(game) {
  const info = state.games[game];
  renderRules({
    title: $('rules-title'),
    summary: $('rules-summary'),
    piles: $('rules-piles'),
    auto: $('rules-auto'),
    info,
    game,
    gameTitle: GAME_TITLES[game],
  });
  closeMenu();
  $('rules').showModal();
}

function main() {
  wireInput({
    state,
    $,
    phone: PHONE,
    timing: clickTiming,
    currentLegalMoves,
    owner,
    playing,
    shownView,
    sendMove,
    say,
    announce,
    render,
    noteTiming,
  });
  document.addEventListener('keydown', (event) => {
    if (state.page === 'replay' && onReplayKey(event)) return;
    const typing = event.target.closest && event.target.closest('input, select, textarea');
    if ((event.ctrlKey || event.metaKey) && !event.shiftKey && event.key.toLowerCase() === 'z' && !typing) {
      if (state.page === 'game' && owner() && !state.daily) {
        event.preventDefault();
        onUndo();
      }
    } else if (event.key === 'Escape' && state.selected) {
      state.selected = null;
      announce('Put down.');
      render();
    } else if (event.key === 'Escape' && document.body.classList.contains('menu-open')) {
      closeMenu();
    }
  });
  $('menu-toggle').addEventListener('click', () => {
    const open = !document.body.classList.contains('menu-open');
    document.body.classList.toggle('menu-open', open);
    $('menu-toggle').setAttribute('aria-expanded', String(open));
  });
  $('rules-open').addEventListener('click', () => openRules($('game-select').value));
  $('rules-open-game').addEventListener('click', () => openRules(state.game || $('game-select').value));
  $('walkthrough-dismiss').addEventListener('click', dismissWalkthrough);
  for (const [testid, key] of [['auto-move', 'autoMove'], ['auto-finish', 'autoFinish']]) {
    const box = $(testid);
    box.checked = state.settings[key];
    box.addEventListener('change', () => {
      state.settings[key] = box.checked;
      localStorage.setItem(SETTINGS_KEY, JSON.stringify(state.settings));
      scheduleAutoPlay();
    });
  }
  wireSettings({ settings: state.settings, key: SETTINGS_KEY, $, render, closeMenu, changed: scheduleAutoPlay });
  PHONE.addEventListener('change', () => render());
  setInterval(() => {
    if (state.view && state.endedAt === null && state.startedAt !== null) renderTimer();
    renderCountdown();
  }, 1000);

  $('new-game-form').addEventListener('submit', startGame);
  $('daily').addEventListener('click', startDaily);
  $('deal').addEventListener('click', () => sendMove('deal'));
  $('redeal').addEventListener('click', () => sendMove('redeal'));
  $('resign').addEventListener('click', onResign);
  $('undo').addEventListener('click', onUndo);
  $('restart').addEventListener('click', restartGame);
  $('menu-restart').addEventListener('click', () => {
    closeMenu();
    restartGame();
  });
  wireEndgame();
  $('hint').addEventListener('click', onHint);
  $('name-form').addEventListener('submit', (event) => saveName(session, event));
  wireAccount(session);
  $('board-day').addEventListener('click', () => {
    state.boardDaysBack = state.boardDaysBack ? 0 : 1;
    loadLeaderboard();
  });
  wireReplayControls();
  $('copy-link').addEventListener('click', copyLink);
  $('game-select').addEventListener('change', loadLeaderboard);
  $('leaderboard-refresh').addEventListener('click', loadLeaderboard);
  window.addEventListener('hashchange', route);
  socket.connect().catch(() => {}); // it reconnects by itself; the page shows the state
  window.addEventListener('online', () => socket.reconnectNow());
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') socket.reconnectNow();
  });
  render();
  route();
  loadGames();
  if (!state.gameId && !/^#\/game\//.test(location.hash)) loadLeaderboard();
  else leaderboardDue = true;
}

main();
