// The local copy of one game: a view kept in step with the server by its patches (DIFF.md,
// compact form of WEBSOCKET.md v2), the game's status, and the owner's legal moves with the
// version they belong to (the rules of protocol/sessions/README.md, "Client state").

import { Emitter } from './emitter.js';
import { SolitaireError, errorFromMessage } from './errors.js';
import type { AcceptedMessage, CompactPatch, GameStatus, ServerMessage, SnapshotMessage } from './messages.js';
import { type Op, OutOfSync, type View, applyCompact, expandMove, expandOps, scoreOf } from './view.js';

/** What the copy holds: the same fields as the recorded sessions' `state`. */
export interface GameState {
  version: number | null;
  status: GameStatus | null;
  score: number | null;
  view: View | null;
  legal_moves: string[] | null;
}

/** The copy changed: a snapshot replaced it, a patch moved it on, or its legal moves became known. */
export interface ChangeEvent {
  game: GameCopy;
  cause: 'snapshot' | 'patch' | 'legal_moves';
  version: number;
  /** The move in normal form ("tableau[3]>foundation[0]"), for a patch. */
  move: string | null;
  /** The long-form ops the patch applied (DIFF.md §3), for a patch. */
  ops: Op[];
}

export interface StatusEvent {
  game: GameCopy;
  status: GameStatus;
  previous: GameStatus | null;
}

export type GameEvents = {
  change: ChangeEvent;
  status: StatusEvent;
  /** A subscription error (unknown_game, daily_open, …) or a patch that did not fit (OutOfSync). */
  error: SolitaireError | OutOfSync;
};

/** What the owner of the copy must do after a message: nothing, re-subscribe with the copy's version, or re-subscribe from scratch. */
export type Resync = null | 'version' | 'snapshot';

/** Sends a move of one game (Connection.move bound to the game). */
export type Mover = (move: string, options: { moveId?: string; version?: number }) => Promise<AcceptedMessage>;

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export class GameCopy extends Emitter<GameEvents> {
  readonly id: string;
  role: 'owner' | 'spectator' | null = null;
  version: number | null = null;
  status: GameStatus | null = null;
  view: View | null = null;
  /** The owner's legal moves at `version` (null: unknown yet, or a spectator). */
  legalMoves: string[] | null = null;
  /** The snapshot's other facts, once one came. */
  game: string | null = null;
  daily: string | null = null;
  assisted = false;
  /** Legal moves received for versions the copy has not reached yet. */
  private readonly later = new Map<number, string[]>();
  private readonly mover: Mover | null;

  /** `mover` sends a move of this game (a Connection passes its own); without it the copy only follows. */
  constructor(id: string, mover: Mover | null = null) {
    super();
    this.id = id;
    this.mover = mover;
  }

  /**
   * Play a move (normal form "tableau[3]>foundation[0]", or compact "t3>f0", "deal", …)
   * against the copy's version; resolves to the `accepted` reply, once the copy holds the move.
   */
  move(move: string, options: { moveId?: string; version?: number } = {}): Promise<AcceptedMessage> {
    if (!this.mover) return Promise.reject(new TypeError('this copy has no connection to move with'));
    return this.mover(move, options);
  }

  /** Cards on the foundations (null before the first snapshot). */
  get score(): number | null {
    return this.view ? scoreOf(this.view) : null;
  }

  get isOver(): boolean {
    return this.status !== null && this.status !== 'playing';
  }

  /** A copy of the state (the recorded sessions' `state`). */
  state(): GameState {
    return clone({ version: this.version, status: this.status, score: this.score, view: this.view, legal_moves: this.legalMoves });
  }

  /** Apply one server message about this game. Returns what the caller must do to resync. */
  handle(message: ServerMessage): Resync {
    switch (message.type) {
      case 'subscribed':
        this.role = message.role;
        if (message.legal_moves !== null) this.learnLegalMoves(message.version, message.legal_moves);
        return null;
      case 'snapshot':
        this.replace(message);
        return null;
      case 'patch':
        return this.applyPatch(message);
      case 'accepted':
        return this.accept(message);
      case 'error':
        this.emit('error', errorFromMessage(message));
        return null;
      default:
        return null;
    }
  }

  private replace(message: SnapshotMessage): void {
    const s = message.snapshot;
    const previous = this.status;
    this.version = s.version;
    this.status = s.status;
    this.view = clone(s.view);
    this.legalMoves = s.legal_moves === null ? null : [...s.legal_moves];
    this.game = s.game;
    this.daily = s.daily;
    this.assisted = s.assisted;
    this.forgetOld();
    this.emit('change', { game: this, cause: 'snapshot', version: s.version, move: null, ops: [] });
    if (previous !== s.status) this.emit('status', { game: this, status: s.status, previous });
  }

  /** A patch (or an `accepted`'s patch): v <= mine: ignore; v == mine + 1: apply; beyond: resync. */
  private applyPatch(patch: CompactPatch): Resync {
    if (this.version === null || this.view === null) return null; // a snapshot is coming
    if (patch.v <= this.version) return null;
    if (patch.v > this.version + 1) return 'version';
    let view: View;
    let ops: Op[];
    try {
      ops = expandOps(patch.o);
      view = applyCompact(clone(this.view), patch);
    } catch (error) {
      if (!(error instanceof OutOfSync)) throw error;
      this.emit('error', error);
      return 'snapshot';
    }
    const previous = this.status;
    this.view = view;
    this.version = patch.v;
    if (patch.s !== undefined) this.status = patch.s;
    this.legalMoves = this.later.get(this.version) ?? null;
    if (this.legalMoves === null && this.role === 'owner' && this.isOver) this.legalMoves = [];
    this.forgetOld();
    this.emit('change', { game: this, cause: 'patch', version: patch.v, move: expandMove(patch.m), ops });
    if (this.status !== previous && this.status !== null) this.emit('status', { game: this, status: this.status, previous });
    return null;
  }

  private accept(message: AcceptedMessage): Resync {
    // `version` is the game's version now (a duplicate's move produced the earlier
    // `applied_version`); the legal moves are those at `version`. Learnt first, so that the
    // patch the accepted carries lands with them (one change, complete).
    this.learnLegalMoves(message.version, message.legal_moves);
    const resync = message.patch ? this.applyPatch(message.patch) : null;
    if (resync === null && message.duplicate && this.version !== null && message.version > this.version) {
      // The copy is behind the game: the patches of the versions in between did not come
      // on this socket (another socket made them while this one was away).
      return 'version';
    }
    return resync;
  }

  private learnLegalMoves(version: number, legal: string[]): void {
    if (version === this.version) {
      this.legalMoves = [...legal];
      this.emit('change', { game: this, cause: 'legal_moves', version, move: null, ops: [] });
    } else if (this.version === null || version > this.version) {
      this.later.set(version, [...legal]);
    }
  }

  private forgetOld(): void {
    for (const version of [...this.later.keys()]) if (this.version !== null && version <= this.version) this.later.delete(version);
  }
}
