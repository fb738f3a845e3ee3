// Typed errors: one class per family of the error codes of protocol/ERRORS.md, each carrying
// the server's `code` and `message` (and the error's other fields in `details`).

import type { ErrorCode } from './schema.js';

/** The error's extra fields (ERRORS.md): field, version, reason_code, closes, limit, retry_after_ms, … */
export interface ErrorDetails {
  field?: string;
  version?: number;
  reason_code?: string;
  closes?: number;
  eligible_at?: number;
  /** account_suspended: Unix ms the suspension ends (null: until an operator lifts it). */
  until?: number | null;
  limit?: string;
  retry_after_ms?: number;
  [key: string]: unknown;
}

/** Any failure the server reports (REST error body, WebSocket `error` or `rejected`). */
export class SolitaireError extends Error {
  /** The code of ERRORS.md ("network" when no answer came, "unexpected" for an unknown code). */
  readonly code: ErrorCode | 'network' | 'unexpected';
  /** The HTTP status (0 for the WebSocket and for network failures). */
  readonly status: number;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode | 'network' | 'unexpected', message: string, status = 0, details: ErrorDetails = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.details = details;
  }

  /** Milliseconds to wait before trying again, when the server said so. */
  get retryAfterMs(): number | undefined {
    return typeof this.details.retry_after_ms === 'number' ? this.details.retry_after_ms : undefined;
  }
}

/** The request itself is wrong: malformed, a missing/unknown/invalid field, too large, a bad seed, a retired protocol version. */
export class RequestError extends SolitaireError {}
/** No valid token (or a revoked one), not authenticated on the socket, or not allowed (owner only, account too new or suspended, an operator route). */
export class AuthError extends SolitaireError {}
/** No such game, game name, route, daily challenge, transfer code, ranked attempt or player. */
export class NotFoundError extends SolitaireError {}
/** A move the server refused: malformed, illegal, stale, game over, move limit, undo in a ranked game. */
export class MoveError extends SolitaireError {}
/** The daily challenge's rules: the day is open (read later) or closed (no more moves), hints are for casual games. */
export class DailyError extends SolitaireError {}
/** A state conflict: the name is taken, the game has no verdict yet. */
export class ConflictError extends SolitaireError {}
/** Too many requests, moves, frames or sockets: wait `retryAfterMs`. */
export class RateLimitError extends SolitaireError {}
/** The server is busy or its store is unreachable: try again later (a `not_replicated` move: re-send it with the same move id). */
export class UnavailableError extends SolitaireError {}
/** The server failed (`internal`), answered something unexpected, or could not be reached (`network`). */
export class ServerError extends SolitaireError {}

type ErrorClass = new (code: ErrorCode | 'network' | 'unexpected', message: string, status?: number, details?: ErrorDetails) => SolitaireError;

/** Every code's family. A `Record` over the generated ErrorCode: a new code breaks the build until it has one. */
export const ERROR_FAMILIES: Readonly<Record<ErrorCode, ErrorClass>> = Object.freeze({
  malformed: RequestError,
  unknown_type: RequestError,
  missing_field: RequestError,
  unknown_field: RequestError,
  invalid_field: RequestError,
  frame_too_large: RequestError,
  unsupported_media_type: RequestError,
  not_acceptable: RequestError,
  invalid_seed: RequestError,
  too_many_errors: RequestError,
  method_not_allowed: RequestError,
  protocol_retired: RequestError,
  unauthorized: AuthError,
  not_authenticated: AuthError,
  token_revoked: AuthError,
  invalid_id_token: AuthError,
  identity_required: AuthError,
  forbidden: AuthError,
  account_too_new: AuthError,
  account_suspended: AuthError,
  operator_required: AuthError,
  unknown_game: NotFoundError,
  unknown_game_name: NotFoundError,
  unknown_transfer_code: NotFoundError,
  unknown_attempt: NotFoundError,
  unknown_player: NotFoundError,
  unknown_review: NotFoundError,
  identity_disabled: NotFoundError,
  not_found: NotFoundError,
  not_open: NotFoundError,
  no_daily: NotFoundError,
  malformed_move: MoveError,
  illegal_move: MoveError,
  game_over: MoveError,
  stale: MoveError,
  move_limit: MoveError,
  undo_ranked: MoveError,
  restart_ranked: DailyError,
  daily_open: DailyError,
  daily_closed: DailyError,
  hints_ranked: DailyError,
  name_taken: ConflictError,
  not_finished: ConflictError,
  identity_taken: ConflictError,
  rate_limited: RateLimitError,
  too_many_connections: RateLimitError,
  audit_busy: UnavailableError,
  hints_busy: UnavailableError,
  daily_not_ready: UnavailableError,
  store_unavailable: UnavailableError,
  identity_unavailable: UnavailableError,
  not_replicated: UnavailableError,
  internal: ServerError,
});

/** The typed error of a code and message from the server (an unknown code: ServerError "unexpected"). */
export function errorFromCode(code: unknown, message: unknown, status = 0, details: ErrorDetails = {}): SolitaireError {
  const text = typeof message === 'string' ? message : `error ${String(code)}`;
  if (typeof code === 'string' && Object.hasOwn(ERROR_FAMILIES, code)) {
    const family = ERROR_FAMILIES[code as ErrorCode];
    return new family(code as ErrorCode, text, status, details);
  }
  return new ServerError('unexpected', `${String(code)}: ${text}`, status, details);
}

/** The typed error of a WebSocket `error` or `rejected` message (or of a REST error map). */
export function errorFromMessage(message: Record<string, unknown>, status = 0): SolitaireError {
  const { code, message: text, type: _type, in_reply_to: _inReplyTo, ...details } = message;
  return errorFromCode(code, text, status, details as ErrorDetails);
}
