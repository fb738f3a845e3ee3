// The live connection of the WebSocket protocol v2 (protocol/WEBSOCKET.md, `/v2/ws`): auth,
// subscriptions as owner or spectator, moves with generated ids, automatic reconnect with
// backoff and resync by version, re-sending a move whose reply was lost with the same id,
// ping/pong, and a quick, quiet reconnect when the server restarts (close code 1012).

import { decode, encode } from '@msgpack/msgpack';

import { Emitter } from './emitter.js';
import { SolitaireError, errorFromMessage } from './errors.js';
import { GameCopy, type Resync } from './game.js';
import type { AcceptedMessage, ClientMessage, PongMessage, ServerMessage } from './messages.js';

/** The part of the WebSocket API the connection uses (browsers', Node 22's, React Native's). */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketFactory = new (url: string) => WebSocketLike;

export interface ConnectionOptions {
  /** The socket URL, e.g. "wss://solitaire.example/v2/ws" (see `socketUrl`). */
  url: string;
  /** A player's token: sent in an `auth` message after every (re)connect. */
  token?: string | null;
  /** A WebSocket constructor (default: the global one). */
  WebSocket?: WebSocketFactory;
  /** First and longest wait between reconnect attempts (ms, ±25% jitter). Default 300 / 5000. */
  reconnectFirstMs?: number;
  reconnectMaxMs?: number;
  /** A ping every this many ms; a socket silent for `silenceLimitMs` is dropped and reopened. */
  pingEveryMs?: number;
  silenceLimitMs?: number;
  /** A socket not open after this many ms is given up and tried again. Default 10000. */
  connectTimeoutMs?: number;
}

export type ConnectionState = 'connecting' | 'open' | 'offline' | 'closed';

export interface ConnectionEvent {
  state: ConnectionState;
  /** True when the socket that just opened replaces an earlier one. */
  reconnect: boolean;
  /** The close code of the socket that went away (1012: the server restarts). */
  code?: number;
}

export type ConnectionEvents = {
  connection: ConnectionEvent;
  /** An error the server sent that no pending call or game took (or a socket-level one). */
  error: SolitaireError;
  /** Every message received, decoded. */
  message: ServerMessage;
};

export interface MoveOptions {
  /** The version the move is made against (default: the local copy's). */
  version?: number;
  /** The move id (1-64 chars; default: a generated one). Re-using it makes a retry safe. */
  moveId?: string;
}

interface PendingMove {
  message: Extract<ClientMessage, { type: 'move' }>;
  resolve: (accepted: AcceptedMessage) => void;
  reject: (error: SolitaireError) => void;
}

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: SolitaireError) => void;
}

const OPEN = 1;
const SERVICE_RESTART = 1012;
const POLICY_VIOLATION = 1008;

let moveCounter = 0;

/** A fresh move id: random, unique per move (protocol: 1-64 characters). */
export function newMoveId(): string {
  const random = (globalThis.crypto as { randomUUID?: () => string } | undefined)?.randomUUID?.();
  moveCounter += 1;
  return random ? `m-${random}` : `m-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${moveCounter}`;
}

/** The socket URL of a server base URL ("https://host" → "wss://host/v2/ws"). */
export function socketUrl(baseUrl: string): string {
  const url = new URL('/v2/ws', baseUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

function toBytes(data: unknown): Uint8Array | null {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return null; // a text frame: the protocol sends none
}

export class Connection extends Emitter<ConnectionEvents> {
  readonly url: string;
  state: ConnectionState = 'connecting';
  /** The authenticated player, once `auth` succeeded. */
  playerId: string | null = null;
  private token: string | null;
  private readonly WebSocketImpl: WebSocketFactory;
  private readonly options: Required<Omit<ConnectionOptions, 'url' | 'token' | 'WebSocket'>>;
  private ws: WebSocketLike | null = null;
  private opened = false;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private connectTimer: ReturnType<typeof setTimeout> | null = null;
  private pingTimer: ReturnType<typeof setInterval> | null = null;
  private lastHeard = 0;
  private readonly games = new Map<string, GameCopy>();
  private readonly subscribeWaiters = new Map<string, Waiter<GameCopy>[]>();
  private readonly moves = new Map<string, PendingMove>();
  private readonly pings = new Map<string, Waiter<PongMessage>>();
  private authWaiters: Waiter<string>[] = [];
  private openWaiters: Waiter<void>[] = [];
  private pingCounter = 0;

  constructor(options: ConnectionOptions) {
    super();
    this.url = options.url;
    this.token = options.token ?? null;
    const impl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketFactory }).WebSocket;
    if (!impl) throw new TypeError('no WebSocket: pass options.WebSocket (Node 20: run with --experimental-websocket)');
    this.WebSocketImpl = impl;
    this.options = {
      reconnectFirstMs: options.reconnectFirstMs ?? 300,
      reconnectMaxMs: options.reconnectMaxMs ?? 5000,
      pingEveryMs: options.pingEveryMs ?? 20000,
      silenceLimitMs: options.silenceLimitMs ?? 45000,
      connectTimeoutMs: options.connectTimeoutMs ?? 10000,
    };
  }

  /** Open the socket (and keep it open until `close`); resolves once it is open. */
  connect(): Promise<void> {
    this.stopped = false;
    const opened = new Promise<void>((resolve, reject) => this.openWaiters.push({ resolve, reject }));
    if (this.ws === null && this.reconnectTimer === null) this.open();
    else if (this.isOpen) this.settleOpen();
    return opened;
  }

  get isOpen(): boolean {
    return this.ws !== null && this.ws.readyState === OPEN;
  }

  /** Close for good: no reconnect; pending calls fail with a "network" error. */
  close(): void {
    this.stopped = true;
    this.clearTimers();
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000);
    this.setState('closed', { code: 1000 });
    this.failPending(new SolitaireError('network', 'the connection was closed'));
  }

  /** Skip the backoff wait (the network is back, the page is visible again). */
  reconnectNow(): void {
    if (this.ws === null && this.reconnectTimer !== null && !this.stopped) {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = null;
      this.attempt = 0;
      this.open();
    }
  }

  /** Drop the current socket (it seems dead): the connection reopens and resyncs by itself. */
  restart(): void {
    this.ws?.close(4000, 'restart');
  }

  /** The token sent in an `auth` after every (re)connect from now on (null: none). */
  setToken(token: string | null): void {
    this.token = token;
  }

  /** Authenticate as the player of `token` (re-sent after every reconnect); resolves to the player id. */
  authenticate(token: string): Promise<string> {
    this.token = token;
    const done = new Promise<string>((resolve, reject) => this.authWaiters.push({ resolve, reject }));
    this.send({ type: 'auth', token });
    return done;
  }

  /**
   * Follow a game (as its owner when authenticated as its player, else as a spectator);
   * resolves to its local copy once the copy holds the game. Re-subscribed after reconnects.
   */
  subscribe(gameId: string): Promise<GameCopy> {
    let game = this.games.get(gameId);
    if (!game) {
      game = new GameCopy(gameId, (move, options) => this.move(gameId, move, options));
      this.games.set(gameId, game);
    }
    const ready = new Promise<GameCopy>((resolve, reject) => {
      const waiters = this.subscribeWaiters.get(gameId) ?? [];
      waiters.push({ resolve, reject });
      this.subscribeWaiters.set(gameId, waiters);
    });
    this.sendSubscribe(game, game.version !== null);
    return ready;
  }

  /** Stop following a game. */
  unsubscribe(gameId: string): void {
    this.games.delete(gameId);
    this.send({ type: 'unsubscribe', game_id: gameId });
  }

  /** The local copy of a subscribed game. */
  game(gameId: string): GameCopy | undefined {
    return this.games.get(gameId);
  }

  /**
   * Play `move` (normal or compact form) in a game; resolves to the `accepted` reply (the
   * local copy has the move by then), rejects with a MoveError (or another typed error).
   * A move in flight when the socket drops is re-sent with the same id after the reconnect.
   */
  move(gameId: string, move: string, options: MoveOptions = {}): Promise<AcceptedMessage> {
    const version = options.version ?? this.games.get(gameId)?.version;
    if (version === null || version === undefined) {
      return Promise.reject(new SolitaireError('network', `no version for ${gameId}: subscribe first or pass options.version`));
    }
    const message: PendingMove['message'] = {
      type: 'move',
      game_id: gameId,
      move,
      version,
      move_id: options.moveId ?? newMoveId(),
      client_time: Date.now(),
    };
    return new Promise<AcceptedMessage>((resolve, reject) => {
      this.moves.set(message.move_id, { message, resolve, reject });
      this.send(message);
    });
  }

  /** Moves sent and not answered yet (their ids). */
  get pendingMoveIds(): string[] {
    return [...this.moves.keys()];
  }

  /** A ping; resolves to the `pong`. */
  ping(): Promise<PongMessage> {
    this.pingCounter += 1;
    const nonce = `p${this.pingCounter}`;
    const done = new Promise<PongMessage>((resolve, reject) => this.pings.set(nonce, { resolve, reject }));
    if (!this.send({ type: 'ping', nonce })) {
      this.pings.delete(nonce);
      return Promise.reject(new SolitaireError('network', 'the socket is not open'));
    }
    return done;
  }

  /** Send one message now; false when the socket is not open (moves and subscriptions are re-sent on open). */
  send(message: ClientMessage): boolean {
    if (!this.isOpen) return false;
    this.ws!.send(encode(message));
    return true;
  }

  // ---- the socket ----

  private open(): void {
    this.reconnectTimer = null;
    let ws: WebSocketLike;
    try {
      ws = new this.WebSocketImpl(this.url);
    } catch {
      this.scheduleReconnect(undefined);
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    // Also what keeps a Node process alive while a socket connects (its handle may not).
    this.connectTimer = setTimeout(() => {
      if (this.ws !== ws) return;
      this.ws = null;
      ws.onopen = ws.onclose = ws.onmessage = ws.onerror = null;
      ws.close();
      this.scheduleReconnect(undefined);
    }, this.options.connectTimeoutMs);
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.clearConnectTimer();
      const reconnect = this.opened;
      this.opened = true;
      this.lastHeard = Date.now();
      this.startPings();
      this.setState('open', { reconnect });
      this.resume();
      this.settleOpen();
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.lastHeard = Date.now();
      const bytes = toBytes(event.data);
      if (bytes === null) return;
      let message: unknown;
      try {
        message = decode(bytes);
      } catch {
        return;
      }
      if (message && typeof message === 'object' && typeof (message as { type?: unknown }).type === 'string') {
        this.attempt = 0;
        this.dispatch(message as ServerMessage);
      }
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.clearConnectTimer();
      this.ws = null;
      this.stopPings();
      if (this.stopped) return;
      this.scheduleReconnect(event?.code);
    };
    ws.onerror = () => {}; // a close follows
  }

  /** After (re)opening: auth, subscribe each game with its version, re-send unanswered moves. */
  private resume(): void {
    if (this.token) this.send({ type: 'auth', token: this.token });
    for (const game of this.games.values()) this.sendSubscribe(game, true);
    for (const pending of this.moves.values()) this.send(pending.message);
  }

  private sendSubscribe(game: GameCopy, withVersion: boolean): void {
    const message: ClientMessage = { type: 'subscribe', game_id: game.id };
    if (withVersion && game.version !== null) message.version = game.version;
    this.send(message);
  }

  private scheduleReconnect(code: number | undefined): void {
    if (this.stopped || this.reconnectTimer !== null) return;
    this.setState(this.opened ? 'offline' : 'connecting', code === undefined ? {} : { code });
    let delay: number;
    if (code === SERVICE_RESTART) {
      // The server restarts: another instance takes the socket at once; spread the clients.
      delay = this.options.reconnectFirstMs * Math.random();
    } else {
      const base = Math.min(this.options.reconnectMaxMs, this.options.reconnectFirstMs * 2 ** this.attempt);
      this.attempt = Math.min(this.attempt + 1, 16);
      delay = base * (0.75 + Math.random() * 0.5);
    }
    this.reconnectTimer = setTimeout(() => this.open(), delay);
  }

  private setState(state: ConnectionState, extra: { reconnect?: boolean; code?: number }): void {
    this.state = state;
    const event: ConnectionEvent = { state, reconnect: extra.reconnect ?? false };
    if (extra.code !== undefined) event.code = extra.code;
    this.emit('connection', event);
  }

  private settleOpen(): void {
    const waiters = this.openWaiters;
    this.openWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  private startPings(): void {
    this.stopPings();
    this.pingTimer = setInterval(() => {
      if (!this.isOpen) return;
      if (Date.now() - this.lastHeard > this.options.silenceLimitMs) {
        this.ws!.close(4000, 'silent'); // half-open: start over
        return;
      }
      this.send({ type: 'ping' });
    }, this.options.pingEveryMs);
  }

  private stopPings(): void {
    if (this.pingTimer !== null) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  private clearConnectTimer(): void {
    if (this.connectTimer !== null) clearTimeout(this.connectTimer);
    this.connectTimer = null;
  }

  private clearTimers(): void {
    this.clearConnectTimer();
    this.stopPings();
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
  }

  private failPending(error: SolitaireError): void {
    for (const pending of this.moves.values()) pending.reject(error);
    this.moves.clear();
    for (const waiter of this.pings.values()) waiter.reject(error);
    this.pings.clear();
    for (const waiters of this.subscribeWaiters.values()) for (const waiter of waiters) waiter.reject(error);
    this.subscribeWaiters.clear();
    for (const waiter of [...this.authWaiters, ...this.openWaiters]) waiter.reject(error);
    this.authWaiters = [];
    this.openWaiters = [];
  }

  // ---- messages ----

  private dispatch(message: ServerMessage): void {
    this.emit('message', message);
    switch (message.type) {
      case 'authenticated': {
        this.playerId = message.player_id;
        const waiters = this.authWaiters;
        this.authWaiters = [];
        for (const waiter of waiters) waiter.resolve(message.player_id);
        return;
      }
      case 'pong': {
        const key = String(message.nonce ?? '');
        this.pings.get(key)?.resolve(message);
        this.pings.delete(key);
        return;
      }
      case 'subscribed':
      case 'snapshot':
        this.toGame(message.game_id, message);
        this.settleSubscribe(message.game_id);
        return;
      case 'patch':
        this.toGame(message.g, message);
        this.settleSubscribe(message.g);
        return;
      case 'accepted': {
        this.toGame(message.game_id, message);
        const pending = this.moves.get(message.move_id);
        this.moves.delete(message.move_id);
        if (pending) this.resolveWhenHeld(message, pending);
        return;
      }
      case 'rejected':
        this.onRejected(message);
        return;
      case 'error':
        this.onError(message);
        return;
      default:
        return;
    }
  }

  /**
   * Resolve a move once the copy holds the version its `accepted` names: a duplicate's
   * carries no patch, and the copy may be behind it (it resyncs); the caller then moves on
   * from the right version.
   */
  private resolveWhenHeld(accepted: AcceptedMessage, pending: PendingMove): void {
    const game = this.games.get(accepted.game_id);
    const held = () => game === undefined || (game.version !== null && game.version >= accepted.version);
    if (held()) {
      pending.resolve(accepted);
      return;
    }
    const off = game!.on('change', () => {
      if (!held()) return;
      off();
      pending.resolve(accepted);
    });
  }

  private toGame(gameId: string, message: ServerMessage): void {
    const game = this.games.get(gameId);
    if (!game) return;
    const resync: Resync = game.handle(message);
    if (resync !== null) this.sendSubscribe(game, resync === 'version');
  }

  /** A subscription is ready once its copy holds the game (after its snapshot or patches). */
  private settleSubscribe(gameId: string): void {
    const game = this.games.get(gameId);
    const waiters = this.subscribeWaiters.get(gameId);
    if (!game || !waiters || game.version === null || game.role === null) return;
    this.subscribeWaiters.delete(gameId);
    for (const waiter of waiters) waiter.resolve(game);
  }

  private onRejected(message: Extract<ServerMessage, { type: 'rejected' }>): void {
    const moveId = message.move_id; // null only for a move frame with no move_id (not ours)
    const pending = moveId === null ? undefined : this.moves.get(moveId);
    if (moveId === null || !pending) return;
    const error = errorFromMessage(message);
    const retryable = message.code === 'not_replicated' || (message.code === 'rate_limited' && message.limit === 'messages');
    if (retryable) {
      // Stored but not confirmed, or not read at all: send it again, same id (WEBSOCKET.md).
      const wait = typeof message.retry_after_ms === 'number' ? message.retry_after_ms : 200;
      setTimeout(() => {
        if (this.moves.get(moveId) === pending) this.send(pending.message);
      }, wait);
      return;
    }
    this.moves.delete(moveId);
    pending.reject(error);
  }

  private onError(message: Extract<ServerMessage, { type: 'error' }>): void {
    const error = errorFromMessage(message);
    if (message.code === 'protocol_retired') {
      // This server speaks another protocol version: reconnecting cannot help, and nothing
      // waiting (a subscribe, a move) will ever be answered.
      this.stopped = true;
      this.failPending(error);
    }
    if (message.in_reply_to === 'auth') {
      const waiters = this.authWaiters;
      this.authWaiters = [];
      for (const waiter of waiters) waiter.reject(error);
      if (!waiters.length) this.emit('error', error);
      return;
    }
    if (message.in_reply_to === 'subscribe' && message.game_id !== null) {
      const waiters = this.subscribeWaiters.get(message.game_id) ?? [];
      this.subscribeWaiters.delete(message.game_id);
      this.games.get(message.game_id)?.handle(message);
      this.games.delete(message.game_id);
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    if (message.in_reply_to === 'ping') {
      for (const waiter of this.pings.values()) waiter.reject(error);
      this.pings.clear();
      return;
    }
    this.emit('error', error);
  }
}
