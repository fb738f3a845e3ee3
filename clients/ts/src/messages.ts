// The messages of the WebSocket protocol v2 (`/v2/ws`, protocol/WEBSOCKET.md). Their shapes
// are generated into schema.ts from the server's schema (server/ws_schema.py, the `Ws…`
// components of /openapi.json); here they get the SDK's names, and the view and the compact
// ops their precise types. A protocol change changes schema.ts, and tsc fails here or where
// the SDK uses what changed.

import type { CompactOp, View } from './view.js';
import type {
  Snapshot,
  WsAccepted,
  WsAuthenticated,
  WsClientMessage,
  WsCompactPatch,
  WsError,
  WsPatch,
  WsPong,
  WsRejected,
  WsServerMessage,
  WsSnapshot,
  WsSubscribed,
  WsUnsubscribed,
} from './schema.js';

/** The protocol version this SDK speaks (the package's major version follows it). */
export const PROTOCOL_VERSION = 2;
/** The WebSocket path of the protocol. */
export const SOCKET_PATH = '/v2/ws';

export type GameStatus = Snapshot['status'];

// ---- client → server ----

export type ClientMessage = WsClientMessage;

// ---- server → client ----

/** A compact patch: one move, one version (`v` - 1 → `v`). */
export interface CompactPatch extends WsCompactPatch {
  /** The compact ops, in order. */
  o: CompactOp[];
}

export interface AuthenticatedMessage extends WsAuthenticated {}
export interface SubscribedMessage extends WsSubscribed {}
export interface SnapshotMessage extends WsSnapshot {
  snapshot: Snapshot & { view: View };
}
export interface PatchMessage extends WsPatch {
  o: CompactOp[];
}
export interface AcceptedMessage extends WsAccepted {
  /** The move's compact patch (without `type`); null for a duplicate. */
  patch: CompactPatch | null;
}
export interface RejectedMessage extends WsRejected {
  [extra: string]: unknown;
}
export interface UnsubscribedMessage extends WsUnsubscribed {}
export interface PongMessage extends WsPong {}
export interface ErrorMessage extends WsError {
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

/** Fails to compile while ServerMessage misses a message type of the schema. */
type CoversEveryType<Missing extends never> = Missing;
type ServerMessageTypesCovered = CoversEveryType<
  Exclude<WsServerMessage['type'], ServerMessage['type']>
>;
