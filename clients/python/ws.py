"""The WebSocket half of the SDK (``protocol/WEBSOCKET.md``).

A :class:`Connection` is one socket that stays up: it authenticates, keeps a
:class:`GameCopy` of every game it subscribed to in step with the server's patches, sends
moves and matches each with its one reply, and, when the socket drops, reconnects with
backoff, authenticates again, re-subscribes every game from its last version and re-sends
the moves still waiting for a reply with the same ``move_id`` (so each applies at most
once).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from clients.python.errors import ApiError, ConnectionLost, MoveRejected, OutOfSync
from clients.python.state import GameCopy, Gap

log = logging.getLogger("clients.python")

#: Errors that mean "the socket is gone or could not be opened": reconnect.
NETWORK_ERRORS = (ConnectionClosed, InvalidHandshake, OSError, TimeoutError)
#: Errors of a reconnection that reconnecting again cannot cure (the token expired, the
#: server speaks another protocol version); any other is retried with backoff.
FATAL_CODES = frozenset({"unauthorized", "protocol_retired"})
#: The wait before a move is sent again when its ``rejected`` gives no delay (ms).
RETRY_MS = 200


def retryable(rejected: dict[str, Any]) -> bool:
    """A ``rejected`` that asks for the same move again, same ``move_id`` (WEBSOCKET.md):
    stored but not replicated, or not read for want of the socket's message credits."""
    code = rejected.get("code")
    return code == "not_replicated" or (
        code == "rate_limited" and rejected.get("limit") == "messages"
    )


@dataclass
class Update:
    """Something that happened on the connection, for callbacks and :meth:`updates`.

    ``kind`` is ``"snapshot"`` or ``"patch"`` (``copy`` changed), ``"accepted"`` or
    ``"rejected"`` (a move's reply), ``"error"`` (a WebSocket ``error`` message),
    ``"connected"`` or ``"disconnected"``.
    """

    kind: str
    game_id: str | None = None
    message: dict[str, Any] | None = None
    copy: GameCopy | None = None


@dataclass
class _Request:
    """A move or ping waiting for its reply; re-sent on every new socket until answered."""

    message: dict[str, Any]
    future: asyncio.Future[dict[str, Any]]
    #: The socket (generation) it was last sent on.
    sent_on: int = -1


@dataclass
class _Waiter:
    predicate: Callable[[], bool]
    future: asyncio.Future[None]
    error: Callable[[], BaseException | None] = field(default=lambda: None)


def pack(message: dict[str, Any]) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False)


class Connection:
    """A self-healing WebSocket connection to the game server.

    ``url`` is the ``ws://…/v2/ws`` address; ``token`` (from ``POST /v1/players``) is
    needed to move, not to watch.  ``timeout`` bounds every wait (seconds).
    ``on_update(update)`` is called for every :class:`Update`; ``on_frame(direction,
    data)`` sees every frame's bytes (``"send"``/``"recv"``), for logging or recording.
    Use it as ``async with Connection(url, token) as connection: ...``.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 10.0,
        min_backoff: float = 0.05,
        max_backoff: float = 2.0,
        on_update: Callable[[Update], None] | None = None,
        on_frame: Callable[[str, bytes], None] | None = None,
    ) -> None:
        self.url = url
        self.token = token
        self.timeout = timeout
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.on_update = on_update
        self.on_frame = on_frame
        #: The copy of every subscribed game, by game id.
        self.copies: dict[str, GameCopy] = {}
        #: Set by ``authenticated``.
        self.player_id: str | None = None
        #: How many times the socket was re-opened after a drop.
        self.reconnects = 0
        self._ws: ClientConnection | None = None
        self._generation = 0
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._fatal: BaseException | None = None
        self._requests: dict[tuple[str, Any], _Request] = {}
        self._nonces = itertools.count(1)
        #: Per game: the version of the last ``subscribed`` (the copy is synced once there).
        self._targets: dict[str, int | None] = {}
        #: Per game: the error a subscribe got.
        self._subscribe_errors: dict[str, ApiError] = {}
        #: Games re-subscribed to resync; their patches that do not fit are ignored meanwhile.
        self._resyncing: set[str] = set()
        self._waiters: list[_Waiter] = []
        self._queues: set[asyncio.Queue[Update | None]] = set()
        self._background: set[asyncio.Task[None]] = set()

    # -- life cycle -------------------------------------------------------------------

    async def open(self) -> Connection:
        """Open the socket and authenticate (errors of this first attempt are raised)."""
        if self._task is not None:
            return self
        await self._open_socket()
        self._task = asyncio.create_task(self._run(), name="clients.python.connection")
        return self

    async def close(self) -> None:
        """Close for good: pending moves and waits fail with :class:`ConnectionLost`."""
        self._closing = True
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(*NETWORK_ERRORS):
                await asyncio.wait_for(ws.close(), self.timeout)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_everything(ConnectionLost("the connection was closed"))

    async def __aenter__(self) -> Connection:
        return await self.open()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._ws is not None

    @property
    def websocket(self) -> ClientConnection | None:
        """The current socket (``None`` while reconnecting)."""
        return self._ws

    # -- the API ----------------------------------------------------------------------

    async def subscribe(self, game_id: str) -> GameCopy:
        """Watch a game (as its owner when authenticated as such); returns its copy once
        it is in step with the server.  Raises :class:`ApiError` (e.g. ``unknown_game``)."""
        copy = self.copies.get(game_id) or GameCopy(game_id)
        self.copies[game_id] = copy
        self._targets[game_id] = None
        self._subscribe_errors.pop(game_id, None)
        await self._send_subscribe(copy, copy.version)

        def error() -> BaseException | None:
            return self._subscribe_errors.get(game_id)

        try:
            await self.wait_for(lambda: self._in_step(copy), error=error)
        except ApiError:
            if not copy.synced:
                self.copies.pop(game_id, None)
            raise
        return copy

    async def unsubscribe(self, game_id: str) -> None:
        """Stop watching a game (its copy is dropped)."""
        if self.copies.pop(game_id, None) is not None:
            self._targets.pop(game_id, None)
            await self._send({"type": "unsubscribe", "game_id": game_id})

    async def move(
        self,
        game_id: str,
        move: str,
        *,
        version: int | None = None,
        move_id: str | None = None,
    ) -> dict[str, Any]:
        """Play ``move`` in ``game_id``; its ``accepted`` reply.

        The move is made against ``version`` (default: the copy's version) with a fresh
        ``move_id`` (or the one given, to retry a move safely).  It is re-sent with the same
        ``move_id`` after a reconnect until its one reply arrives.  When the game is
        subscribed, this returns once the copy has caught up with the move.  Raises
        :class:`MoveRejected` when the server refuses it (nothing changed).
        """
        copy = self.copies.get(game_id)
        if version is None:
            if copy is None or copy.version is None:
                raise ValueError(f"subscribe to {game_id} first, or give the version")
            version = copy.version
        message = {
            "type": "move",
            "game_id": game_id,
            "move": move,
            "version": version,
            "move_id": move_id or uuid.uuid4().hex,
        }
        reply = await self._request(("move", message["move_id"]), message)
        if reply["type"] == "rejected":
            raise MoveRejected.from_reply(reply)
        if copy is not None and self.copies.get(game_id) is copy:
            target = reply["version"]
            try:
                await self.wait_for(lambda: (copy.version or 0) >= target)
            except TimeoutError:
                # The patch was lost somehow: resync and give it one more chance.
                await self._resubscribe(copy, copy.version)
                await self.wait_for(lambda: (copy.version or 0) >= target)
        return reply

    async def ping(self) -> dict[str, Any]:
        """Round trip to the server: its ``pong`` (with ``server_time``)."""
        nonce = next(self._nonces)
        return await self._request(("ping", nonce), {"type": "ping", "nonce": nonce})

    async def updates(self) -> AsyncIterator[Update]:
        """Every :class:`Update` from now on, until the connection is closed."""
        queue: asyncio.Queue[Update | None] = asyncio.Queue()
        self._queues.add(queue)
        try:
            while (update := await queue.get()) is not None:
                yield update
        finally:
            self._queues.discard(queue)

    async def wait_for(
        self,
        predicate: Callable[[], bool],
        timeout: float | None = None,
        error: Callable[[], BaseException | None] = lambda: None,
    ) -> None:
        """Wait until ``predicate()`` holds (checked after every message), at most
        ``timeout`` seconds (default: the connection's); raises ``error()`` if it
        returns one first."""
        if self._fatal is not None:
            raise self._fatal
        if predicate():
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiter = _Waiter(predicate, future, error)
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(future, self.timeout if timeout is None else timeout)
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    # -- sending ----------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> bool:
        """Send on the current socket; False when there is none (it is being replaced)."""
        ws = self._ws
        if ws is None:
            return False
        data = pack(message)
        if self.on_frame is not None:
            self.on_frame("send", data)
        try:
            await ws.send(data)
        except ConnectionClosed:
            return False
        return True

    async def _request(self, key: tuple[str, Any], message: dict[str, Any]) -> dict[str, Any]:
        if self._fatal is not None:
            raise self._fatal
        if self._closing:
            raise ConnectionLost("the connection is closed")
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._requests[key] = _Request(message, future)
        try:
            await self._flush()
            return await asyncio.wait_for(future, self.timeout)
        finally:
            self._requests.pop(key, None)

    async def _flush(self) -> None:
        """Send every waiting request not yet sent on the current socket."""
        for request in list(self._requests.values()):
            if self._ws is None:
                return
            if request.sent_on != self._generation and not request.future.done():
                request.sent_on = self._generation
                await self._send(request.message)

    async def _send_subscribe(self, copy: GameCopy, version: int | None = None) -> None:
        message: dict[str, Any] = {"type": "subscribe", "game_id": copy.game_id}
        if version is not None:
            message["version"] = version
        await self._send(message)

    async def _resubscribe(self, copy: GameCopy, version: int | None) -> None:
        """Ask for what the copy misses (patches from ``version``, or a snapshot)."""
        self._resyncing.add(copy.game_id)
        await self._send_subscribe(copy, version)

    def _in_step(self, copy: GameCopy) -> bool:
        target = self._targets.get(copy.game_id)
        return target is not None and copy.version is not None and copy.version >= target

    # -- the socket -------------------------------------------------------------------

    async def _open_socket(self) -> None:
        ws = await connect(
            self.url, max_size=2**20, open_timeout=self.timeout, close_timeout=self.timeout
        )
        try:
            if self.token is not None:
                data = pack({"type": "auth", "token": self.token})
                if self.on_frame is not None:
                    self.on_frame("send", data)
                # A server that refuses the socket (protocol_retired, store_unavailable)
                # sends its error and closes at once: read it even if the send failed.
                with contextlib.suppress(ConnectionClosed):
                    await ws.send(data)
                frame = await asyncio.wait_for(ws.recv(), self.timeout)
                if self.on_frame is not None and isinstance(frame, bytes):
                    self.on_frame("recv", frame)
                reply = unpack(frame) if isinstance(frame, bytes) else None
                if not isinstance(reply, dict) or reply.get("type") != "authenticated":
                    raise ApiError.from_body(reply)
                self.player_id = reply["player_id"]
        except BaseException:
            with contextlib.suppress(*NETWORK_ERRORS):
                await asyncio.wait_for(ws.close(), self.timeout)
            raise
        self._generation += 1
        self._ws = ws
        self._resyncing.clear()
        for copy in list(self.copies.values()):
            await self._send_subscribe(copy, copy.version)
        await self._flush()
        self._emit(Update("connected"))

    async def _run(self) -> None:
        """Read frames; when the socket drops, reconnect with backoff."""
        while not self._closing:
            ws = self._ws
            if ws is not None:
                with contextlib.suppress(*NETWORK_ERRORS):
                    async for frame in ws:
                        if self.on_frame is not None and isinstance(frame, bytes):
                            self.on_frame("recv", frame)
                        self._receive(frame)
                if self._ws is ws:
                    self._ws = None
                if self._closing:
                    return
                self._emit(Update("disconnected"))
            delay = self.min_backoff
            while not self._closing:
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                try:
                    await self._open_socket()
                except NETWORK_ERRORS as error:
                    log.info("reconnect failed (%s); retrying", error)
                    delay = min(delay * 2, self.max_backoff)
                    continue
                except ApiError as error:
                    if error.code not in FATAL_CODES:  # store_unavailable, too_many_connections
                        log.info("reconnect refused (%s); retrying", error.code)
                        delay = min(delay * 2, self.max_backoff)
                        continue
                    self._fatal = error
                    self._fail_everything(error)
                    return
                except InvalidURI as error:
                    self._fatal = error
                    self._fail_everything(error)
                    return
                self.reconnects += 1
                break

    def _receive(self, frame: bytes | str) -> None:
        try:
            message = unpack(frame) if isinstance(frame, bytes) else None
            if isinstance(message, dict):
                self._handle(message)
            else:
                log.warning("ignored a frame that is not a msgpack map: %r", frame[:80])
        except Exception:  # a bug here must not kill the connection
            log.exception("could not handle a frame")
        self._check_waiters()

    # -- receiving --------------------------------------------------------------------

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        game_id = message.get("g") if kind == "patch" else message.get("game_id")
        copy = self.copies.get(game_id) if isinstance(game_id, str) else None
        if kind == "subscribed":
            if copy is not None:
                self._resyncing.discard(copy.game_id)
                self._targets[copy.game_id] = message["version"]
                copy.on_subscribed(message)
        elif kind == "snapshot" and copy is not None:
            copy.on_snapshot(message["snapshot"])
            self._emit(Update("snapshot", copy.game_id, message, copy))
            self._want_legal_moves(copy)
        elif kind == "patch" and copy is not None:
            self._on_patch(copy, message)
        elif kind in ("accepted", "rejected"):
            key = ("move", message.get("move_id"))
            request = self._requests.get(key)
            if kind == "rejected" and request is not None and retryable(message):
                self._spawn(self._send_again(key, request, message))
                return
            if request is not None and not request.future.done():
                request.future.set_result(message)
                del self._requests[key]
            if copy is not None and kind == "accepted":
                # Its legal moves first (they are those of its version), so that its patch
                # lands with them: nothing left to ask for.
                copy.on_accepted(message)
                if message.get("patch") is not None:  # the move's patch: none comes apart
                    self._on_patch(copy, message["patch"])
                self._catch_up(copy, message)
                self._want_legal_moves(copy)
            self._emit(Update(kind, game_id, message, copy))
        elif kind == "pong":
            request = self._requests.pop(("ping", message.get("nonce")), None)
            if request is not None and not request.future.done():
                request.future.set_result(message)
        elif kind == "error":
            self._on_error(message)

    def _on_patch(self, copy: GameCopy, message: dict[str, Any]) -> None:
        try:
            applied = copy.on_patch(message)
        except Gap:
            if copy.game_id not in self._resyncing:
                self._spawn(self._resubscribe(copy, copy.version))
            return
        except (OutOfSync, KeyError, TypeError) as error:
            log.warning("game %s out of step (%s): fetching it again", copy.game_id, error)
            if copy.game_id not in self._resyncing:
                self._spawn(self._resubscribe(copy, None))
            return
        if applied:
            self._emit(Update("patch", copy.game_id, message, copy))
            self._want_legal_moves(copy)

    async def _send_again(
        self, key: tuple[str, Any], request: _Request, reply: dict[str, Any]
    ) -> None:
        """A move the server asks to have again with the same ``move_id`` (stored but not
        replicated, or not read for want of message credits): after the delay it gives."""
        delay = reply.get("retry_after_ms")
        await asyncio.sleep((delay if isinstance(delay, int) else RETRY_MS) / 1000)
        if self._requests.get(key) is request and not request.future.done():
            await self._send(request.message)

    def _catch_up(self, copy: GameCopy, accepted: dict[str, Any]) -> None:
        """A duplicate's ``accepted`` carries no patch but the game's version now: when the
        copy is behind it, the patches in between did not come on this socket."""
        behind = copy.version is not None and accepted["version"] > copy.version
        if accepted.get("duplicate") and behind and copy.game_id not in self._resyncing:
            self._spawn(self._resubscribe(copy, copy.version))

    def _on_error(self, message: dict[str, Any]) -> None:
        error = ApiError.from_body(message)
        game_id = message.get("game_id")
        game_id = game_id if isinstance(game_id, str) else None
        if message.get("in_reply_to") == "subscribe" and game_id is not None:
            self._resyncing.discard(game_id)
            self._subscribe_errors[game_id] = error
        log.warning("server error: %s", error)
        if error.code == "protocol_retired":
            # The server speaks another protocol version: reconnecting cannot help.
            self._fatal = error
            self._closing = True
            self._fail_everything(error)
        self._emit(Update("error", game_id, message, self.copies.get(game_id or "")))

    def _want_legal_moves(self, copy: GameCopy) -> None:
        """An owner who did not make the last move learns the legal moves by
        re-subscribing with its version (WEBSOCKET.md, ``patch``)."""
        if not copy.needs_legal_moves or copy.game_id in self._resyncing:
            return
        target = self._targets.get(copy.game_id)
        if target is not None and copy.version is not None and copy.version < target:
            return  # catching up to the last ``subscribed``, which brought its legal moves
        for key, request in self._requests.items():
            if key[0] == "move" and request.message["game_id"] == copy.game_id:
                return  # its reply will bring them
        self._spawn(self._resubscribe(copy, copy.version))

    # -- plumbing ---------------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _emit(self, update: Update) -> None:
        if self.on_update is not None:
            try:
                self.on_update(update)
            except Exception:
                log.exception("on_update failed")
        for queue in self._queues:
            queue.put_nowait(update)
        self._check_waiters()

    def _check_waiters(self) -> None:
        for waiter in list(self._waiters):
            if waiter.future.done():
                continue
            error = waiter.error()
            if error is not None:
                waiter.future.set_exception(error)
            elif waiter.predicate():
                waiter.future.set_result(None)

    def _fail_everything(self, error: BaseException) -> None:
        for request in self._requests.values():
            if not request.future.done():
                request.future.set_exception(error)
        for waiter in self._waiters:
            if not waiter.future.done():
                waiter.future.set_exception(error)
        for queue in self._queues:
            queue.put_nowait(None)
