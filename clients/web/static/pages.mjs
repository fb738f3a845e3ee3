// The pages beside the table: "My games" (display name, stats, history, the account panel
// of account.mjs) and the replay
// viewer (a finished game move by move, with its audit verdict; a closed daily's par line).
// They read REST routes only (protocol/REST.md, "Players" and "Replays"); the replay's
// tables come from the server's patches, taken backwards from the last table.

import { Connection, RestClient, SolitaireError, expandMove, expandOps, socketUrl } from '/static/sdk/index.js';
import { showAccount } from './account.mjs';
import { formatClock } from './panels.mjs';
import { GAME_TITLES, cardName, pileName, renderTable } from './render.mjs';
import { OutOfSync, applyOps, clone, parseMove } from './view.mjs';
import { renderCalendar } from './calendar.mjs';
import { historyStatus, renderStats } from './stats.mjs';
import { errorText, nameProblem } from './words.mjs';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);
/** REST calls of these pages (the SDK's client; each passes the player's token itself). */
const api = new RestClient();
const HISTORY_PAGE = 20;
/** How long the replay waits for the server's patches before showing the moves alone. */
const PATCHES_WAIT_MS = 5000;
/** Patches the server keeps per game (WEBSOCKET.md, `subscribed`): how far back a replay can draw. */
const PATCH_HISTORY = 200;

/** A leaderboard's (or history's) label for a player: the display name, else a short id. */
export function playerLabel(name, playerId) {
  if (name) return name;
  const id = String(playerId || '');
  return `anonymous ${id.replace(/^p_/, '').slice(0, 4)}`;
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** "at 00:00 UTC (in 3:12:04)" for a Unix ms in the future. */
export function closingWords(closes) {
  if (typeof closes !== 'number') return 'at its close';
  const at = new Date(closes);
  const hhmm = `${String(at.getUTCHours()).padStart(2, '0')}:${String(at.getUTCMinutes()).padStart(2, '0')}`;
  return `at ${hhmm} UTC on ${at.toISOString().slice(0, 10)} (in ${formatClock(closes - Date.now())})`;
}

// -- my games ---------------------------------------------------------------------------------

/** The history the stats' bests and the calendar are computed from (the newest games). */
const STATS_HISTORY = 200;

/**
 * The "My games" page. `session` is {player(), register(name), asPlayer(method, path, body)}:
 * the player (or null), registering one with a name, and calls as the player.
 */
export async function showMyGames(session) {
  $('transfer-code-row').hidden = true;
  $('account-export-link').hidden = true;
  const note = $('me-note');
  note.textContent = '';
  $('name-error').textContent = '';
  $('name-input').removeAttribute('aria-invalid');
  const player = session.player();
  if (!player) {
    $('name-shown').textContent = 'Choose a name to register as a player, or just start a game.';
    $('name-save').textContent = 'Register';
    $('stats-rows').replaceChildren();
    $('calendar').replaceChildren();
    $('history').replaceChildren();
    $('history-more').hidden = true;
    note.textContent = 'No games yet.';
    showAccount(null);
    return;
  }
  $('name-save').textContent = 'Save name';
  try {
    const [me, stats, page, recent] = await Promise.all([
      session.asPlayer('GET', '/v1/players/me'),
      session.asPlayer('GET', '/v1/players/me/stats'),
      session.asPlayer('GET', `/v1/players/me/games?limit=${HISTORY_PAGE}`),
      session.asPlayer('GET', `/v1/players/me/games?limit=${STATS_HISTORY}`),
    ]);
    showName(me.name);
    showAccount(me);
    renderStats(stats.games || {}, recent.games || []);
    showCalendar(session, recent.games || []);
    $('history').replaceChildren();
    appendHistory(session, page);
  } catch (error) {
    note.textContent = `Your games could not be loaded: ${errorText(error)}`;
  }
}

function showCalendar(session, history) {
  const select = $('calendar-game');
  if (!select.options.length) {
    for (const [game, title] of Object.entries(GAME_TITLES)) select.append(new Option(title, game));
    select.value = $('game-select').value;
  }
  const rankOf = async (game, date) =>
    (await session.asPlayer('GET', `/v1/leaderboards/${game}/${date}/me?radius=0`)).rank;
  const draw = () => renderCalendar(history, select.value, rankOf);
  select.onchange = draw;
  draw();
}

function showName(name) {
  $('name-input').value = name || '';
  $('name-shown').textContent = name
    ? `Leaderboards show you as “${name}”.`
    : 'No name yet: leaderboards show you as an anonymous player.';
}

function appendHistory(session, page) {
  const list = $('history');
  for (const game of page.games || []) list.append(historyItem(game));
  if (!list.children.length) $('me-note').textContent = 'No games yet: start one from the menu.';
  const more = $('history-more');
  more.hidden = !page.next;
  more.onclick = async () => {
    more.disabled = true;
    try {
      const next = await session.asPlayer(
        'GET',
        `/v1/players/me/games?limit=${HISTORY_PAGE}&cursor=${encodeURIComponent(page.next)}`,
      );
      appendHistory(session, next);
    } catch (error) {
      $('me-note').textContent = `Older games could not be loaded: ${error.message}`;
    } finally {
      more.disabled = false;
    }
  };
}

function historyItem(game) {
  const li = el('li');
  li.dataset.testid = 'history-item';
  li.dataset.gameId = game.id;
  const when = new Date(game.created_at).toISOString().slice(0, 16).replace('T', ' ');
  const status = historyStatus(game);
  li.dataset.status = status;
  li.append(
    el('b', GAME_TITLES[game.game] || game.game),
    el('span', game.daily ? `daily ${game.daily}` : game.restart_of ? 'casual, restarted deal' : 'casual', 'tag'),
    el('span', status),
    el('span', `${game.score} cards home, ${game.moves} moves`),
    el('span', `${when} UTC`, 'note'),
  );
  const words = { playing: 'Continue', abandoned: 'Pick up again' };
  const link = el('a', words[status] || 'Replay');
  link.href = game.status === 'playing' ? `#/game/${encodeURIComponent(game.id)}` : `#/replay/${encodeURIComponent(game.id)}`;
  link.setAttribute('aria-label', `${link.textContent}: ${GAME_TITLES[game.game] || game.game}, ${when}`);
  li.append(link);
  return li;
}

/** The name form: registers (with the name) when there is no player yet, else renames. */
export async function saveName(session, event) {
  event.preventDefault();
  const input = $('name-input');
  const error = $('name-error');
  const name = input.value.trim();
  error.textContent = '';
  input.removeAttribute('aria-invalid');
  const problem = nameProblem(name);
  if (problem) {
    input.setAttribute('aria-invalid', 'true');
    error.textContent = problem;
    input.focus();
    return;
  }
  try {
    const body = { name: name === '' ? null : name };
    const me = session.player()
      ? await session.asPlayer('PATCH', '/v1/players/me', body)
      : await session.register(body.name);
    showName(me.name);
    if (!session.player() || event.submitter) await showMyGames(session);
    $('name-shown').textContent = me.name ? `Saved: leaderboards show you as “${me.name}”.` : 'Name removed.';
  } catch (failure) {
    if (!(failure instanceof SolitaireError)) throw failure;
    input.setAttribute('aria-invalid', 'true');
    error.textContent = errorText(failure);
    input.focus();
  }
}

// -- the replay viewer ------------------------------------------------------------------------

const replay = { moves: [], states: [], step: 0, game: null, highlight: [] };

/** The table before move k is rebuilt from the table after it: each op taken back. */
function takeBack(view, move, ops) {
  const before = clone(view);
  for (const op of [...ops].reverse()) {
    if (op.op === 'move') {
      if (op.to === 'stock') return null; // an undo's card back on the stock: what was on top is not told
      const to = op.to === 'stock' ? null : pileOf(before, op.to);
      if (!to || to[to.length - 1] !== op.card) return null;
      to.pop();
      if (op.from === 'stock') {
        before.stock.count += 1;
        if ('top' in before.stock) before.stock.top = op.card;
      } else {
        const from = pileOf(before, op.from);
        if (!from) return null;
        from.push(op.card);
      }
    } else if (op.op === 'reveal') {
      before.stock.top = null;
    } else {
      return null; // a `set` or `redeals_left`: the pile's earlier content is not in the patch
    }
  }
  if (move === 'redeal') before.redeals_left += 1;
  try {
    // Only a table that the patch takes to the one after counts.
    const again = applyOps(clone(before), ops, move);
    return JSON.stringify(again) === JSON.stringify(view) ? before : null;
  } catch (error) {
    if (error instanceof OutOfSync) return null;
    throw error;
  }
}

function pileOf(view, address) {
  const m = /^(foundation|tableau)\[(\d+)\]$/.exec(address);
  const pile = m ? view[m[1] === 'foundation' ? 'foundations' : 'tableau']?.[Number(m[2])] : view[address];
  return Array.isArray(pile) ? pile : null;
}

/**
 * The game's patches from version `from` on, over a connection of its own, each as
 * {move, ops} in the long form of DIFF.md (the SDK expands the compact patches).
 */
function fetchPatches(gameId, token, from) {
  return new Promise((resolve) => {
    const patches = [];
    let target = null;
    const connection = new Connection({ url: socketUrl(location.origin) });
    const done = (result) => {
      clearTimeout(timer);
      connection.close();
      resolve(result);
    };
    const timer = setTimeout(() => done(null), PATCHES_WAIT_MS);
    connection.on('connection', ({ state }) => {
      if (state === 'open') {
        if (token) connection.send({ type: 'auth', token });
        connection.send({ type: 'subscribe', game_id: gameId, version: from });
      } else if (state !== 'closed') {
        done(null); // the socket went: the moves are listed alone
      }
    });
    connection.on('message', (message) => {
      const id = message.type === 'patch' ? message.g : message.game_id;
      if (id !== undefined && id !== null && id !== gameId) return;
      if (message.type === 'subscribed') {
        target = message.version;
        if (target === from) done(patches);
      } else if (message.type === 'patch') {
        patches.push({ move: expandMove(message.m), ops: expandOps(message.o) });
        if (message.v === target) done(patches);
      } else if (message.type === 'snapshot' || message.type === 'error') {
        done(null); // too far back: the server sends the table as it is instead
      }
    });
    connection.connect().catch(() => done(null));
  });
}

function resetReplay(title) {
  $('replay-title').textContent = title;
  $('replay-note').textContent = 'Loading…';
  $('verdict').hidden = true;
  $('replay-controls').hidden = true;
  $('replay-table').replaceChildren();
  $('move-list').replaceChildren();
  Object.assign(replay, { moves: [], states: [], step: 0, game: null });
}

/** `#/replay/{id}`: any finished game, move by move, with its verdict. */
export async function showReplay(gameId, token) {
  resetReplay('Replay');
  let exported;
  try {
    exported = await api.request('GET', `/v1/games/${encodeURIComponent(gameId)}/replay`, { token });
  } catch (error) {
    $('replay-note').textContent = replayRefusal(error);
    return;
  }
  const title = GAME_TITLES[exported.game] || exported.game;
  $('replay-title').textContent = `Replay: ${title}${exported.daily ? `, daily ${exported.daily}` : ''}`;
  replay.game = exported.game;
  replay.moves = exported.moves.map((entry) => entry.move);
  loadVerdict(gameId, token, exported);
  let snapshot = null;
  let patches = null;
  const last = replay.moves.length;
  const from = Math.max(last - PATCH_HISTORY, 0);
  try {
    [snapshot, patches] = await Promise.all([
      api.request('GET', `/v1/games/${encodeURIComponent(gameId)}`, { token }),
      fetchPatches(gameId, token, from),
    ]);
  } catch (error) {
    $('replay-note').textContent = `The tables could not be loaded (${error.message}); the moves are listed below.`;
  }
  replay.states = new Array(replay.moves.length + 1).fill(null);
  if (snapshot && snapshot.version === last) {
    replay.states[last] = snapshot.view;
    if (patches && patches.length === last - from) {
      for (let k = last; k > from; k -= 1) {
        const patch = patches[k - from - 1];
        const before = takeBack(replay.states[k], patch.move, patch.ops);
        if (!before) break;
        replay.states[k - 1] = before;
      }
    }
  }
  const known = replay.states.filter(Boolean).length;
  $('replay-note').textContent =
    known === replay.states.length
      ? `${replay.moves.length} moves, ${exported.status}, ${exported.score} cards home. Step with the buttons, the arrow keys or the move list.`
      : `${replay.moves.length} moves, ${exported.status}, ${exported.score} cards home. ` +
        `The table is shown for the last ${Math.max(known - 1, 0)} moves only (the server keeps 200 steps, and a redeal's or undo's earlier piles are not in its patches).`;
  showSteps(known === replay.states.length ? 0 : replay.states.findIndex(Boolean));
}

function replayRefusal(error) {
  if (error instanceof SolitaireError && error.code === 'daily_open') {
    return `This daily is still open: its games can be watched after the day closes, ${closingWords(error.details.closes)}.`;
  }
  if (error instanceof SolitaireError && error.code === 'unknown_game') return 'There is no such game (or it has expired).';
  return `The replay could not be loaded: ${error.message}`;
}

async function loadVerdict(gameId, token, exported) {
  const integrity = $('verdict-integrity');
  const fair = $('verdict-fair');
  $('verdict').hidden = false;
  integrity.textContent = 'Audit: checking…';
  fair.textContent = '';
  try {
    const verdict = await api.request('GET', `/v1/games/${encodeURIComponent(gameId)}/verdict`, { token });
    const words = verdictWords(verdict, exported);
    integrity.textContent = words.integrity;
    fair.textContent = words.fair;
  } catch (error) {
    if (error instanceof SolitaireError && error.code === 'not_finished') {
      integrity.textContent =
        exported.daily && exported.status !== 'playing'
          ? "Audit: a daily game's verdict comes once its day has closed."
          : 'Audit: the game is still being played, so there is no verdict yet.';
    } else if (error instanceof SolitaireError && error.code === 'audit_busy') {
      integrity.textContent = 'Audit: the auditor is busy right now; open the replay again in a moment.';
    } else {
      integrity.textContent = `Audit: unavailable (${error.message}).`;
    }
  }
}

/** A verdict (AUDIT.md §4) in words: integrity, then the fair-play signals. */
export function verdictWords(verdict, exported = {}) {
  let integrity;
  if (verdict.integrity === 'pass') {
    integrity = `Integrity: passed. All ${verdict.replayed_moves} moves were replayed on the revealed deal and every step matches the record.`;
  } else if (verdict.integrity === 'chain_only') {
    integrity = 'Integrity: the move record is intact, but the deal is not revealed yet, so the moves could not be replayed.';
  } else {
    const first = (verdict.findings || [])[0];
    integrity = `Integrity: failed${first ? `: ${first.detail}` : '.'}`;
  }
  const signals = verdict.fair_play || [];
  let fair = signals.length
    ? `Fair play: ${signals.length === 1 ? 'one signal' : `${signals.length} signals`}: ${signals
        .map((s) => `${s.name.replaceAll('_', ' ')} (${s.detail})`)
        .join('; ')}.`
    : 'Fair play: no signal; nothing looks unlike fair human play.';
  if (exported.assisted) fair += ' Hints were used in this game.';
  return { integrity, fair };
}

/** `#/par/{game}/{date}`: a closed day's par line (the solver's), its moves in order. */
export async function showPar(game, date) {
  resetReplay(`Par line: ${GAME_TITLES[game] || game}, ${date}`);
  $('verdict').hidden = true;
  let daily;
  try {
    daily = await api.request('GET', `/v1/daily/${encodeURIComponent(game)}/${encodeURIComponent(date)}`);
  } catch (error) {
    $('replay-note').textContent = `The day could not be loaded: ${error.message}`;
    return;
  }
  if (!daily.closed || !daily.par) {
    $('replay-note').textContent = `The par line is shown once the day closes, ${closingWords(Date.now() + daily.seconds_to_next * 1000)}.`;
    return;
  }
  replay.game = game;
  replay.moves = daily.par.moves;
  replay.states = new Array(replay.moves.length + 1).fill(null);
  $('replay-note').textContent =
    `The solver's line on this deal: ${daily.par.length} moves, ${daily.par.won ? 'a win' : `${daily.proven_score} of ${daily.total_cards} cards home`}. ` +
    'Practise the deal from the menu to play along.';
  showSteps(0);
}

function showSteps(step) {
  const list = $('move-list');
  list.replaceChildren(
    ...replay.moves.map((move, index) => {
      const li = el('li');
      const button = el('button', moveWords(move));
      button.type = 'button';
      button.addEventListener('click', () => goTo(index + 1));
      li.append(button);
      return li;
    }),
  );
  $('replay-controls').hidden = false;
  goTo(step);
}

function moveWords(move) {
  const parsed = parseMove(move);
  if (parsed) return `${pileName(parsed.from)} → ${pileName(parsed.to)}`;
  return move;
}

/** Show the table after `step` moves (0: the deal). */
export function goTo(step) {
  const last = replay.moves.length;
  replay.step = Math.max(0, Math.min(last, step));
  const view = replay.states[replay.step];
  const table = $('replay-table');
  const move = replay.step > 0 ? parseMove(replay.moves[replay.step - 1]) : null;
  const marks = { selected: null, targets: new Set(), sources: new Set(), focus: null, hint: move };
  if (view) renderTable(table, replay.game, view, marks, { compact: window.matchMedia('(max-width: 600px)').matches });
  else table.replaceChildren(el('p', 'This position is not available to show; the move list still steps through it.', 'note'));
  $('replay-step').textContent = `${replay.step} / ${last}`;
  $('replay-step').setAttribute('aria-label', stepWords(view));
  $('replay-first').disabled = $('replay-prev').disabled = replay.step === 0;
  $('replay-next').disabled = $('replay-last').disabled = replay.step === last;
  $('move-list').querySelectorAll('li').forEach((li, index) => {
    if (index + 1 === replay.step) {
      li.setAttribute('aria-current', 'step');
      li.scrollIntoView?.({ block: 'nearest' });
    } else {
      li.removeAttribute('aria-current');
    }
  });
}

function stepWords(view) {
  if (replay.step === 0) return `The deal, before move 1 of ${replay.moves.length}`;
  const move = replay.moves[replay.step - 1];
  const parsed = parseMove(move);
  const pile = parsed && view ? pileOf(view, parsed.to) : null;
  const card = pile && pile.length ? `: ${cardName(pile[pile.length - 1])}` : '';
  return `Move ${replay.step} of ${replay.moves.length}, ${moveWords(move)}${card}`;
}

/** The viewer's keys: arrows step, Home and End jump. Returns true when it took the key. */
export function onReplayKey(event) {
  if (event.target.closest && event.target.closest('input, select, textarea')) return false;
  const moves = { ArrowLeft: -1, ArrowRight: 1 };
  if (event.key in moves) goTo(replay.step + moves[event.key]);
  else if (event.key === 'Home') goTo(0);
  else if (event.key === 'End') goTo(replay.moves.length);
  else return false;
  event.preventDefault();
  return true;
}

export function wireReplayControls() {
  $('replay-first').addEventListener('click', () => goTo(0));
  $('replay-prev').addEventListener('click', () => goTo(replay.step - 1));
  $('replay-next').addEventListener('click', () => goTo(replay.step + 1));
  $('replay-last').addEventListener('click', () => goTo(replay.moves.length));
}

/** For tests and the curious: where the viewer is. */
export function replayState() {
  return { step: replay.step, moves: replay.moves.length, shown: replay.states.map(Boolean) };
}
