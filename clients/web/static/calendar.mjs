// The daily calendar: the past four weeks of one game's dailies (played, won, missed),
// a medal for a top-three rank, and the daily streaks (days in a row with a daily played,
// any game). Built from the player's history (GET /v1/players/me/games) and their rank of
// each day played (GET /v1/leaderboards/{game}/{date}/me).

import { GAME_TITLES } from './render.mjs';

const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);
export const CALENDAR_DAYS = 28;
const MEDALS = { 1: 'gold', 2: 'silver', 3: 'bronze' };

function dayBefore(date, days = 1) {
  const day = new Date(`${date}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() - days);
  return day.toISOString().slice(0, 10);
}

export function todayUtc() {
  return new Date().toISOString().slice(0, 10);
}

/**
 * Days in a row with a daily played (any game): `current` ends today or yesterday (today's
 * may be still to play), `best` anywhere in the history given.
 */
export function dailyStreaks(history, today = todayUtc()) {
  const days = new Set(history.filter((game) => game.daily).map((game) => game.daily));
  let best = 0;
  for (const day of days) {
    if (days.has(dayBefore(day))) continue; // not the start of a run
    let length = 0;
    for (let d = day; days.has(d); d = dayBefore(d, -1)) length += 1;
    best = Math.max(best, length);
  }
  let current = 0;
  let day = days.has(today) ? today : dayBefore(today);
  while (days.has(day)) {
    current += 1;
    day = dayBefore(day);
  }
  return { current, best };
}

/** `game`'s last CALENDAR_DAYS days, oldest first: {date, state: won|played|missed|today, gameId}. */
export function calendarDays(history, game, today = todayUtc()) {
  const played = new Map();
  for (const entry of history) {
    if (entry.daily && entry.game === game) played.set(entry.daily, entry);
  }
  const days = [];
  for (let back = CALENDAR_DAYS - 1; back >= 0; back -= 1) {
    const date = dayBefore(today, back);
    const entry = played.get(date);
    let state = 'missed';
    if (entry) state = entry.status === 'won' ? 'won' : 'played';
    else if (date === today) state = 'today';
    days.push({ date, state, gameId: entry ? entry.id : null, score: entry ? entry.score : null });
  }
  return days;
}

export function medalOf(rank) {
  return MEDALS[rank] || null;
}

const STATE_WORDS = { won: 'won', played: 'played', missed: 'missed', today: 'not played yet' };

/**
 * Fill the calendar section for `game`. `rankOf(game, date)` resolves to the player's rank
 * that day (or null).
 */
export async function renderCalendar(history, game, rankOf) {
  const grid = $('calendar');
  const days = calendarDays(history, game);
  const streaks = dailyStreaks(history);
  $('calendar-streak').textContent =
    `Daily streak: ${streaks.current} day${streaks.current === 1 ? '' : 's'} in a row (best ${streaks.best}), any game.`;
  $('calendar-title').textContent = `${GAME_TITLES[game]}: the last ${CALENDAR_DAYS} days`;
  const cells = days.map((day) => {
    const li = document.createElement('li');
    li.className = `day ${day.state}`;
    li.dataset.testid = 'calendar-day';
    li.dataset.date = day.date;
    li.dataset.state = day.state;
    const label = `${day.date}: ${STATE_WORDS[day.state]}`;
    const number = document.createElement('span');
    number.textContent = String(Number(day.date.slice(8)));
    number.setAttribute('aria-hidden', 'true');
    li.append(number);
    const words = document.createElement('span');
    words.className = 'visually-hidden';
    words.textContent = label;
    li.append(words);
    li.title = label;
    return li;
  });
  grid.replaceChildren(...cells);
  const won = days.filter((d) => d.state === 'won').length;
  const played = days.filter((d) => d.state === 'won' || d.state === 'played').length;
  $('calendar-note').textContent = `${played} of ${CALENDAR_DAYS} days played, ${won} won.`;
  // Medals: the player's rank of each day played (a few requests, the days shown only).
  await Promise.all(
    days
      .filter((day) => day.gameId)
      .map(async (day, index) => {
        const rank = await rankOf(game, day.date).catch(() => null);
        const medal = medalOf(rank);
        if (!medal) return;
        const cell = cells[days.indexOf(day)];
        cell.dataset.medal = medal;
        cell.classList.add(medal);
        const text = `${day.date}: ${STATE_WORDS[day.state]}, rank ${rank}: ${medal} medal`;
        cell.title = text;
        cell.querySelector('.visually-hidden').textContent = text;
        return index;
      }),
  );
}
