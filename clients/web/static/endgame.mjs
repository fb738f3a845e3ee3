// The end of a game: a dialog with what happened (time, moves, cards home; a daily's rank
// and streak) and what to do next (new game, replay this deal, undo out of a stuck game,
// the daily, share). Not modal: the table stays readable behind it; focus moves in and
// Escape closes it (the thin outcome line stays).

import { formatClock, outcomeText } from './panels.mjs';
import { GAME_TITLES } from './render.mjs';
import { dailyStreaks } from './calendar.mjs';
import { errorText } from './words.mjs';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

/** The game and status the dialog was last opened for: it opens once per ending. */
let openedFor = null;
let hooksOf = null;

const HEADINGS = { won: 'You won!', stuck: 'No more moves', resigned: 'Game over' };

/**
 * Called after each render. `game`: {gameId, game, daily, status, score, total, moves,
 * elapsedMs, owner, undoable}; `hooks`: newGame(game), restart(), undo(), daily(game),
 * board(), asPlayer(method, path), link().
 */
export function updateEndgame(game, hooks) {
  hooksOf = hooks;
  const dialog = $('end-dialog');
  if (!game.gameId || game.status === 'playing' || !game.status || !game.owner) {
    if (game.status === 'playing' && openedFor && openedFor.startsWith(`${game.gameId}:`)) openedFor = null;
    if (dialog.open && (!game.gameId || game.status === 'playing')) dialog.close();
    return;
  }
  const key = `${game.gameId}:${game.status}`;
  if (openedFor === key) {
    fillButtons(game); // undo may have become (un)available
    return;
  }
  openedFor = key;
  fill(game);
  if (!dialog.open) dialog.show();
  dialog.dataset.status = game.status;
  $(fillButtons(game)).focus(); // focus moves in, to the likeliest next action
}

function fill(game) {
  const title = GAME_TITLES[game.game] || game.game;
  $('end-title').textContent = HEADINGS[game.status] || 'Game over';
  $('end-text').textContent = outcomeText(game.game, game.status, null, game.score, game.total) || '';
  const rows = [
    ['Game', game.daily ? `${title}, daily ${game.daily}` : title],
    ['Time', formatClock(game.elapsedMs)],
    ['Moves', String(game.moves)],
    ['Cards home', `${game.score} of ${game.total}`],
  ];
  if (game.daily) rows.push(['Rank', '…'], ['Daily streak', '…'], ['Next daily', `in ${formatClock(untilTomorrowUtc())}`]);
  const list = $('end-summary');
  list.replaceChildren();
  for (const [name, value] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = name;
    const dd = document.createElement('dd');
    dd.textContent = value;
    dd.dataset.testid = `end-${name.toLowerCase().replaceAll(' ', '-')}`;
    list.append(dt, dd);
  }
  $('end-share-text').textContent = '';
  $('end-share-text').hidden = true;
  fillButtons(game);
  if (game.daily) loadDailyStanding(game);
  summaryOf.game = game;
}

/** Milliseconds to the next daily (00:00 UTC). */
function untilTomorrowUtc() {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();
}

/** What the share button copies: no seed, no game id of an open day's attempt. */
const summaryOf = { game: null, rank: null, size: null };

function fillButtons(game) {
  const stuckUndo = game.status === 'stuck' && !game.daily && game.undoable !== 0;
  const show = {
    'end-undo': stuckUndo,
    'end-restart': !game.daily,
    'end-new': true,
    'end-daily': true,
    'end-share': true,
  };
  for (const [testid, shown] of Object.entries(show)) $(testid).hidden = !shown;
  $('end-daily').textContent = game.daily ? 'Back to the daily board' : "Today's daily";
  // The likeliest next action: undo when stuck, else play again.
  return stuckUndo ? 'end-undo' : game.daily ? 'end-daily' : 'end-restart';
}

async function loadDailyStanding(game) {
  const { asPlayer } = hooksOf;
  const date = game.daily;
  try {
    const [mine, board, history] = await Promise.all([
      asPlayer('GET', `/v1/leaderboards/${game.game}/${date}/me?radius=0`),
      asPlayer('GET', `/v1/leaderboards/${game.game}/${date}?limit=1`),
      asPlayer('GET', '/v1/players/me/games?limit=200'),
    ]);
    if (summaryOf.game !== game) return;
    summaryOf.rank = mine.rank;
    summaryOf.size = board.size;
    $('end-rank').textContent = mine.rank ? `${mine.rank} of ${board.size} so far today` : 'not on the board';
    const streaks = dailyStreaks(history.games || [], date);
    $('end-daily-streak').textContent = `${streaks.current} day${streaks.current === 1 ? '' : 's'} (best ${streaks.best})`;
  } catch (error) {
    $('end-rank').textContent = errorText(error);
  }
}

/** The text the share button copies. */
export function shareText(game, rank = null, size = null) {
  const title = GAME_TITLES[game.game] || game.game;
  const outcome = game.status === 'won' ? 'won' : game.status === 'stuck' ? 'stuck' : 'resigned';
  const what = game.daily ? `${title} daily ${game.daily}` : title;
  const standing = game.daily && rank ? `, rank ${rank} of ${size}` : '';
  const where = `${location.origin}${location.pathname}`;
  return `Patience: ${what}: ${outcome} with ${game.score}/${game.total} cards home in ${formatClock(game.elapsedMs)}, ${game.moves} moves${standing}. Play at ${where}`;
}

async function share() {
  const game = summaryOf.game;
  if (!game) return;
  const text = shareText(game, summaryOf.rank, summaryOf.size);
  const shown = $('end-share-text');
  shown.hidden = false;
  try {
    await navigator.clipboard.writeText(text);
    shown.textContent = `Copied: ${text}`;
  } catch {
    shown.textContent = text; // no clipboard here: the text to copy by hand
  }
}

export function closeEndgame({ refocus = false } = {}) {
  const dialog = $('end-dialog');
  if (!dialog.open) return;
  const inside = dialog.contains(document.activeElement);
  dialog.close();
  // Focus goes back to the table's tab stop, not to the page's start.
  if (refocus && inside) document.querySelector('[data-testid="table"] [data-pile][tabindex="0"]')?.focus();
}

export function wireEndgame() {
  const dialog = $('end-dialog');
  const run = (action) => () => {
    closeEndgame();
    action();
  };
  $('end-undo').addEventListener('click', run(() => hooksOf.undo()));
  $('end-restart').addEventListener('click', run(() => hooksOf.restart()));
  $('end-new').addEventListener('click', run(() => hooksOf.newGame(summaryOf.game?.game)));
  $('end-daily').addEventListener('click', run(() => (summaryOf.game?.daily ? hooksOf.board() : hooksOf.daily(summaryOf.game?.game))));
  $('end-share').addEventListener('click', share);
  $('end-close').addEventListener('click', () => closeEndgame({ refocus: true }));
  dialog.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.stopPropagation();
      closeEndgame({ refocus: true });
    }
  });
}
