// Stats per game: the server's counts (GET /v1/players/me/stats: played, won, streaks) and,
// from the history of games kept (GET /v1/players/me/games), the best time and the fewest
// moves of a win. A game left in play for long is shown as abandoned.

import { formatClock } from './panels.mjs';
import { GAME_TITLES } from './render.mjs';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);
/** A game still in play this long after it was dealt is taken as abandoned. */
export const ABANDONED_MS = 12 * 3600 * 1000;

/** A history entry's status as a player would say it: "abandoned" for a game left long. */
export function historyStatus(entry, now = Date.now()) {
  if (entry.status === 'playing' && now - entry.created_at > ABANDONED_MS) return 'abandoned';
  return entry.status;
}

/** Best time and fewest moves of the wins of each game in `history`. */
export function bests(history) {
  const best = {};
  for (const entry of history) {
    if (entry.status !== 'won' || !entry.finished_at) continue;
    const mine = (best[entry.game] ||= { time: null, moves: null });
    const time = entry.finished_at - entry.created_at;
    if (mine.time === null || time < mine.time) mine.time = time;
    if (mine.moves === null || entry.moves < mine.moves) mine.moves = entry.moves;
  }
  return best;
}

function cell(label, value) {
  const td = document.createElement('td');
  td.dataset.label = label;
  td.textContent = String(value);
  return td;
}

/** The stats table: one row per game; on a phone each row is a small card (no sideways scroll). */
export function renderStats(games, history) {
  const best = bests(history);
  $('stats-rows').replaceChildren(
    ...Object.keys(GAME_TITLES).map((game) => {
      const s = games[game] || {};
      const played = s.played ?? 0;
      const won = s.won ?? 0;
      const tr = document.createElement('tr');
      tr.dataset.game = game;
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = GAME_TITLES[game];
      tr.append(
        th,
        cell('Played', played),
        cell('Won', won),
        cell('Win %', played ? `${Math.round((won / played) * 100)} %` : '–'),
        cell('Best score', s.best_score ?? '–'),
        cell('Best time', best[game]?.time != null ? formatClock(best[game].time) : '–'),
        cell('Fewest moves', best[game]?.moves ?? '–'),
        cell('Streak', s.current_streak ?? 0),
        cell('Best streak', s.best_streak ?? 0),
      );
      return tr;
    }),
  );
}
