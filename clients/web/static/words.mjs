// What a refusal means, for a player: one human text per typed error code the server can
// send (protocol/ERRORS.md, server/errors.py). tests/web/test_web_around.py checks that
// every code has one. A text is a string, or a function of the error's details.

/** "in 12 s", "in 3 min" for a delay in milliseconds. */
function inWords(ms) {
  const seconds = Math.max(Math.ceil((ms || 1000) / 1000), 1);
  return seconds < 90 ? `in ${seconds} s` : `in ${Math.round(seconds / 60)} min`;
}

function atWords(ms) {
  if (typeof ms !== 'number') return 'later';
  const at = new Date(ms);
  return `at ${at.toISOString().slice(11, 16)} UTC on ${at.toISOString().slice(0, 10)}`;
}

export const NAME_RULE = 'A name is 3 to 24 letters, digits, spaces, _ - or . (no space first or last).';

export const ERROR_TEXTS = Object.freeze({
  malformed: 'Something went wrong sending that: reload the page and try again.',
  unknown_type: 'This page is out of date: reload it.',
  missing_field: 'Something was missing from that request: reload the page and try again.',
  unknown_field: 'This page is out of date: reload it.',
  invalid_field: (d) => (d.field === 'name' ? NAME_RULE : `That ${d.field ? String(d.field).replaceAll('_', ' ') : 'value'} is not valid.`),
  frame_too_large: 'That was too large to send.',
  unsupported_media_type: 'This page is out of date: reload it.',
  not_acceptable: 'This page is out of date: reload it.',
  unauthorized: 'Your sign-in has expired: a new game will make you a new player.',
  token_revoked: 'You were signed out everywhere: a new game will make you a new player.',
  invalid_id_token: 'That sign-in could not be checked: try signing in again.',
  not_authenticated: 'Still connecting: try again in a moment.',
  forbidden: 'Only the player of this game can do that: you are watching it.',
  daily_open: (d) => `This is another player's daily: it can be watched once the day closes, ${atWords(d.closes)}.`,
  account_too_new: (d) => `New players can play ranked dailies from ${atWords(d.eligible_at)}; practise a past day meanwhile.`,
  identity_required: 'Ranked dailies on this server need a linked sign-in: link one under My games.',
  operator_required: 'That page is for the operators of this server.',
  account_suspended: (d) => `Your ranked play is suspended${d.until ? ` until ${atWords(d.until)}` : ''}; casual games stay open.`,
  hints_ranked: 'No hints in a ranked daily: this one is all yours.',
  undo_ranked: 'No undo in a ranked daily: every move counts.',
  restart_ranked: 'A daily has one try: it cannot be restarted. Practise it once the day closes.',
  unknown_game: 'There is no such game (or it has expired).',
  unknown_game_name: 'There is no such game here.',
  not_found: 'That page does not exist.',
  unknown_transfer_code: 'That code does not work: it may be mistyped, used already, or older than 15 minutes.',
  unknown_attempt: 'There is no such daily attempt (or it has expired).',
  unknown_player: 'There is no such player (or their record has expired).',
  unknown_review: 'There is no such item to review.',
  identity_disabled: 'Signing in with an account is not available on this server.',
  not_open: "That day's daily has not opened yet.",
  no_daily: 'There was no daily that day.',
  method_not_allowed: 'This page is out of date: reload it.',
  invalid_seed: 'A seed is 1 to 128 letters, digits or . _ : - (no spaces): or leave it empty for a random deal.',
  malformed_move: 'That is not a move.',
  // The server's reason is already in words ("9♠ cannot go on …"): shown as it is.
  illegal_move: (d) => d.message || 'That move is not allowed now.',
  game_over: 'The game is over: start a new one, or replay this deal.',
  daily_closed: "The day closed: your daily counts as it stands. Tomorrow's is open.",
  name_taken: 'Another player has that name (names are compared ignoring case): pick another.',
  identity_taken: 'That sign-in is linked to another player.',
  not_finished: 'The game is still on: its verdict comes once it is over.',
  stale: 'The table changed meanwhile: it has been brought up to date, try again.',
  move_limit: 'This game has reached its move limit: only resigning is left.',
  rate_limited: (d) => `Too many at once: try again ${inWords(d.retry_after_ms)}.`,
  too_many_connections: 'Too many open pages from this address: close some and reload.',
  audit_busy: (d) => `The auditor is busy: try again ${inWords(d.retry_after_ms)}.`,
  hints_busy: 'The hint solver is busy right now: try again in a moment.',
  daily_not_ready: "Today's daily is being dealt: it will be ready in a few seconds.",
  too_many_errors: 'The connection had too many problems and was closed: reload the page.',
  protocol_retired: 'This page is out of date: reload it.',
  identity_unavailable: 'Signing in is not available right now: try again in a while.',
  store_unavailable: 'The server is having trouble right now: trying again.',
  not_replicated: 'The server could not confirm that move yet: it is being sent again.',
  internal: 'Something went wrong on the server: try again.',
});

/**
 * A refusal in words: a SolitaireError of the SDK ({code, message, details, retryAfterMs}),
 * or a WebSocket error / rejected frame ({code, message, ...details}).
 */
export function errorText(error) {
  if (!error) return 'Something went wrong: try again.';
  const code = error.code;
  if (code === 'network') return 'The server cannot be reached: check the connection and try again.';
  const details = { ...(error.details || {}), ...error, message: error.message };
  if (error.retryAfterMs !== undefined && details.retry_after_ms === undefined) details.retry_after_ms = error.retryAfterMs;
  const text = ERROR_TEXTS[code];
  if (typeof text === 'function') return text(details);
  if (typeof text === 'string') return text;
  return 'Something went wrong: try again.';
}

/** A display name's problem before it is sent (null: none the page can see). */
export function nameProblem(name) {
  if (name === '') return null; // removes the name
  if (name.length < 3 || name.length > 24) return NAME_RULE;
  if (/^\s|\s$/.test(name) || !/^[\p{L}\p{N}_ .-]+$/u.test(name)) return NAME_RULE;
  return null;
}
