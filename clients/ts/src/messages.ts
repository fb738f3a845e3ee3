// The messages of the WebSocket protocol v2 (`/v2/ws`, protocol/WEBSOCKET.md). The snapshot is
// the generated Snapshot schema of the REST half; the rest is written from WEBSOCKET.md.

import type { CompactOp, View } from './view.js';
import type { ErrorCode, Snapshot } from './schema.js';

/** The protocol version this SDK speaks (the package's major version follows it). */
export const PROTOCOL_VERSION = 2;
/** The WebSocket path of the protocol. */
export const SOCKET_PATH = '/v2/ws';

export type GameStatus = Snapshot['status'];

// ---- client → server ----

export type ClientMessage =
  | { type: 'auth'; token: string }
  | { type: 'subscribe'; game_id: string; version?: number }
  | { type: 'unsubscribe'; game_id: string }
  | { type: 'move'; game_id: string; move: string; version: number; move_id: string; client_time?: number }
  | { type: 'ping'; nonce?: string | number };

// ---- server → client ----

/** A compact patch: one move, one version (`v` - 1 → `v`). */
export interface CompactPatch {
  /** The game's id. */
  g: string;
  /** The version the move produced. */
  v: number;
  /** The compact move text ("t3>f0", "s>w", "deal", "redeal", "resign", "undo"). */
  m: string;
  /** The compact ops, in order. */
  o: CompactOp[];
  /** The new status, only when it changed. */
  s?: GameStatus;
  /** Matrimony's redeals_left, only when it changed. */
  r?: number;
}

export interface AuthenticatedMessage { type: 'authenticated'; player_id: string }
export interface SubscribedMessage {
  type: 'subscribed';
  game_id: string;
  role: 'owner' | 'spectator';
  version: number;
  legal_moves: string[] | null;
}
export interface SnapshotMessage { type: 'snapshot'; game_id: string; snapshot: Snapshot & { view: View } }
export interface PatchMessage extends CompactPatch { type: 'patch' }
export interface AcceptedMessage {
  type: 'accepted';
  move_id: string;
  game_id: string;
  version: number;
  applied_version: number;
  duplicate: boolean;
  status: GameStatus;
  score: number;
  legal_moves: string[];
  /** The move's compact patch (without `type`); null (or absent) for a duplicate. */
  patch?: CompactPatch | null;
}
export interface RejectedMessage {
  type: 'rejected';
  move_id: string;
  game_id: string;
  code: ErrorCode;
  message: string;
  version?: number;
  reason_code?: string;
  retry_after_ms?: number;
  [extra: string]: unknown;
}
export interface UnsubscribedMessage { type: 'unsubscribed'; game_id: string }
export interface PongMessage { type: 'pong'; nonce?: string | number | null; server_time: number }
export interface ErrorMessage {
  type: 'error';
  in_reply_to: string | null;
  game_id: string | null;
  code: ErrorCode;
  message: string;
  [extra: string]: unknown;
}

export type ServerMessage =
  | AuthenticatedMessage
  | SubscribedMessage
  | SnapshotMessage
  | PatchMessage
  | AcceptedMessage
  | RejectedMessage
  | UnsubscribedMessage
  | PongMessage
  | ErrorMessage;
