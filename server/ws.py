"""The WebSocket endpoint ``/v2/ws``: msgpack frames (``protocol/WEBSOCKET.md``, version 2);
``/v1/ws`` only tells its clients that it is retired."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError
from starlette.websockets import WebSocket, WebSocketDisconnect

from server import metrics
from server.codec import check_fields, pack, unpack
from server.errors import ApiError
from server.hub import Hub, Patch
from server.limits import Credits, Limiter, client_address
from server.patches import normal_move
from server.rules import load_game
from server.service import GameService, owner_moves
from server.store import ORIGIN_BYTES
from server.ws_schema import CLIENT_MESSAGES, CLIENT_SCHEMAS, client_fields
from server.wstransport import SCOPE_KEY, WebSocketProtocol

log = logging.getLogger("server.ws")

#: Consecutive protocol errors after which the connection is closed.
MAX_PROTOCOL_ERRORS = 10
#: Bytes waiting for a client that does not read before it is dropped.
SEND_BUFFER_LIMIT = 512 * 1024
#: Errors that are the client's protocol mistakes (not moves the rules refuse).
PROTOCOL_ERRORS = {
    "malformed",
    "unknown_type",
    "missing_field",
    "unknown_field",
    "invalid_field",
    "frame_too_large",
    "not_authenticated",
    "unauthorized",
}
#: A background resync that meets a store outage retries, from this delay (doubling to
#: 1 s), for this many seconds before it tells the client to resubscribe.
RESYNC_FIRST_DELAY = 0.05
RESYNC_PATIENCE = 15.0
CLOSE_POLICY_VIOLATION = 1008
CLOSE_TRY_AGAIN_LATER = 1013
#: How long an ``accepted`` waits for the patches before it to reach this worker (another
#: tab moved just before; its patch is still on its way from Redis), in seconds, polled.
CATCH_UP_WAIT = 1.0
CATCH_UP_POLL = 0.002

#: The fields of each client message, from its schema (``server/ws_schema.py``).
FIELDS = {kind: client_fields(kind) for kind in CLIENT_SCHEMAS}
MOVE_ID = CLIENT_MESSAGES["WsMove"]["properties"]["move_id"]


@dataclass
class Subscription:
    game_id: str
    role: str
    #: Version the client has once the frames queued for it are sent; None while a resync
    #: is running.
    version: int | None = None
    pending: list[tuple[int, int, bytes]] = field(default_factory=list)
    #: The version of this socket's own move whose patch came back from Redis before its
    #: ``accepted`` went out (the ``accepted`` carries it), and that patch's frame.
    awaiting: int | None = None
    own_frame: bytes = b""
    #: Frames of later versions, held until that ``accepted`` is sent.
    held: list[bytes] = field(default_factory=list)


class Connection:
    """One client socket: its player, its subscriptions.

    Frames are written as they are sent (``WebSocketProtocol.send_now``), with no task or
    queue per socket: a patch reaches a worker's spectators in one loop over them."""

    def __init__(
        self,
        websocket: WebSocket,
        transport: WebSocketProtocol,
        service: GameService,
        hub: Hub,
        limiter: Limiter,
        address: str,
    ) -> None:
        self.websocket = websocket
        self.transport = transport
        self.service = service
        self.hub = hub
        self.limiter = limiter
        #: The client's address, for the per-address limits.
        self.address = address
        self.credits = Credits(limiter.limits, limiter.refused)
        self.player_id: str | None = None
        #: When the socket's token was issued (Unix seconds): a revocation after it closes
        #: the socket.
        self.token_issued = 0
        self.subscriptions: dict[str, Subscription] = {}
        self.protocol_errors = 0
        self.closing: int | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        #: Published in front of this socket's moves' patches: which patch is its own.
        self.tag = secrets.token_bytes(ORIGIN_BYTES)
        #: The game of the move being played (a socket plays one at a time), else None.
        self.moving: str | None = None

    # -- sending ------------------------------------------------------------

    def send(self, message: dict[str, Any] | bytes) -> None:
        if self.closing is not None:
            return
        frame = message if isinstance(message, bytes) else pack(message)
        buffered = self.transport.send_now(frame)
        if buffered is not None and buffered > SEND_BUFFER_LIMIT:
            # It would not read a close frame either.
            log.warning("client does not read its frames; dropping it")
            self.closing = CLOSE_TRY_AGAIN_LATER
            self.transport.drop()

    def close_soon(self, code: int) -> None:
        """Close after the frames already sent (the client's read loop then ends)."""
        if self.closing is not None:
            return
        self.closing = code
        self.spawn(self.websocket.close(code))

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def spawn_resync(self, subscription: Subscription) -> None:
        """Resync in the background (called from the hub, which cannot wait)."""
        self.spawn(self._background_resync(subscription))

    async def _background_resync(self, subscription: Subscription) -> None:
        # The hub asks for a resync when its pub/sub connection comes back, which is often
        # before Redis answers data commands again (it may still be loading its append-only
        # file): keep trying for a while rather than leave the client out of step.
        version, delay, waited = subscription.version, RESYNC_FIRST_DELAY, 0.0
        while True:
            try:
                await self.resync(subscription, version)
                return
            except ApiError as error:
                self.reply_error(error, {"type": "subscribe"})
                return
            except RedisError:
                if self.subscriptions.get(subscription.game_id) is not subscription:
                    return  # superseded by a newer subscribe, or unsubscribed
                if waited >= RESYNC_PATIENCE:
                    break
            await asyncio.sleep(delay)
            waited += delay
            delay = min(delay * 2, 1.0)
        unavailable = ApiError("store_unavailable", "the store is unreachable; resubscribe")
        self.reply_error(unavailable, {"type": "subscribe"})

    # -- receiving ----------------------------------------------------------

    async def handle(self, data: bytes | None) -> None:
        message: Any = None
        try:
            if data is None:
                raise ApiError("malformed", "frames are binary msgpack, not text")
            message = unpack(data)
            if not isinstance(message, dict):
                raise ApiError("malformed", "a message is a msgpack map")
            self.credits.spend()
            kind = message.get("type")
            handler = HANDLERS.get(kind) if isinstance(kind, str) else None
            if handler is None:
                raise ApiError("unknown_type", f"unknown message type {str(kind)[:40]!r}")
            await handler(self, message)
            self.protocol_errors = 0
        except ApiError as error:
            self.reply_error(error, message)
        except RedisError as error:
            log.warning("redis unavailable: %s", error)
            self.reply_error(
                ApiError("store_unavailable", "the store is unreachable; retry"), message
            )

    def reply_error(self, error: ApiError, message: Any) -> None:
        """``rejected`` for a move, ``error`` for anything else; both name the game."""
        if error.code in PROTOCOL_ERRORS:
            self.protocol_errors += 1
        fields = message if isinstance(message, dict) else {}
        kind, game_id, move_id = (fields.get(name) for name in ("type", "game_id", "move_id"))
        reply: dict[str, Any] = {"type": "rejected"} if kind == "move" else {"type": "error"}
        if kind == "move":
            reply["move_id"] = move_id if isinstance(move_id, str) else None
        else:
            reply["in_reply_to"] = kind if isinstance(kind, str) else None
        reply["game_id"] = game_id if isinstance(game_id, str) else None
        self.send({**reply, **error.body()})
        if self.protocol_errors >= MAX_PROTOCOL_ERRORS:
            self.send(
                {
                    "type": "error",
                    "in_reply_to": None,
                    "game_id": None,
                    **ApiError("too_many_errors", "too many protocol errors; closing").body(),
                }
            )
            self.close_soon(CLOSE_POLICY_VIOLATION)

    # -- messages -----------------------------------------------------------

    async def on_auth(self, message: dict[str, Any]) -> None:
        check_fields(message, *FIELDS["auth"])
        claims = self.service.token_claims(message["token"])
        revocations = self.service.revocations
        if self.player_id is not None:
            revocations.unwatch(self.player_id, self.on_revoked)
        self.player_id, self.token_issued = claims.player_id, claims.issued
        revocations.watch(self.player_id, self.on_revoked)
        self.send({"type": "authenticated", "player_id": self.player_id})

    def on_revoked(self, not_before: int) -> None:
        """The player's tokens were revoked (on any instance): if this socket's token is
        among them, tell the client and close."""
        if self.token_issued >= not_before:
            return
        revoked = ApiError("token_revoked", "the token was revoked; sign in again")
        self.send({"type": "error", "in_reply_to": None, "game_id": None, **revoked.body()})
        self.close_soon(CLOSE_POLICY_VIOLATION)

    async def on_ping(self, message: dict[str, Any]) -> None:
        check_fields(message, *FIELDS["ping"])
        self.send(
            {"type": "pong", "nonce": message.get("nonce"), "server_time": int(time.time() * 1000)}
        )

    async def on_subscribe(self, message: dict[str, Any]) -> None:
        check_fields(message, *FIELDS["subscribe"])
        game_id = message["game_id"]
        stored = await self.service.readable(game_id, self.player_id)
        role = "owner" if self.player_id == stored.owner else "spectator"
        old = self.subscriptions.get(game_id)
        if old is not None:
            await self.hub.remove(game_id, self.on_patch)
        subscription = Subscription(game_id, role)
        self.subscriptions[game_id] = subscription
        await self.hub.add(game_id, self.on_patch)
        legal_moves = (
            owner_moves(stored, load_game(stored.state), self.service.clock())
            if role == "owner"
            else None
        )
        self.send(
            {
                "type": "subscribed",
                "game_id": game_id,
                "role": role,
                "version": stored.version,
                "legal_moves": legal_moves,
            }
        )
        await self.resync(subscription, message.get("version"))

    async def on_unsubscribe(self, message: dict[str, Any]) -> None:
        check_fields(message, *FIELDS["unsubscribe"])
        game_id = message["game_id"]
        if self.subscriptions.pop(game_id, None) is not None:
            await self.hub.remove(game_id, self.on_patch)
        self.send({"type": "unsubscribed", "game_id": game_id})

    @metrics.measure_move("websocket")
    async def on_move(self, message: dict[str, Any]) -> None:
        check_fields(message, *FIELDS["move"])
        if self.player_id is None:
            raise ApiError("not_authenticated", "send 'auth' with your token first")
        if not MOVE_ID["minLength"] <= len(message["move_id"]) <= MOVE_ID["maxLength"]:
            length = f"{MOVE_ID['minLength']}-{MOVE_ID['maxLength']}"
            raise ApiError("invalid_field", f"move_id is {length} characters", field="move_id")
        await self.limiter.take([("address_moves", self.address), ("player_moves", self.player_id)])
        game_id = message["game_id"]
        # Until its accepted is out, this move's patch coming back from Redis is held.
        self.moving = game_id
        try:
            reply, patch, game = await self.service.play(
                game_id,
                self.player_id,
                normal_move(message["move"]),
                message["version"],
                move_id=message["move_id"],
                client_time=message.get("client_time"),
                origin=self.tag,
            )
            accepted = {
                "type": "accepted",
                "move_id": message["move_id"],
                "game_id": game_id,
                "version": reply["version"],
                "applied_version": reply["applied_version"],
                "duplicate": reply["duplicate"],
                "status": game.status,
                "score": game.score,
                "legal_moves": game.legal_moves(),
                "patch": None if patch is None else {k: v for k, v in patch.items() if k != "type"},
            }
            if patch is None:
                self.send(accepted)
            else:
                await self.send_accepted(game_id, reply["version"], accepted)
        except BaseException:
            self.release_own(game_id)  # stored but not accepted: its patch goes as a patch
            raise
        finally:
            self.moving = None

    async def send_accepted(self, game_id: str, version: int, accepted: dict[str, Any]) -> None:
        """Send ``accepted`` (which carries the patch to ``version``) in its place in the
        game's stream of patches to this socket: after version - 1, before version + 1."""
        subscription = self.subscriptions.get(game_id)
        waited = 0.0
        while (
            subscription is not None
            and subscription.awaiting is None
            and (subscription.version is None or subscription.version < version - 1)
            and waited < CATCH_UP_WAIT
        ):
            await asyncio.sleep(CATCH_UP_POLL)  # a patch before this one is on its way
            waited += CATCH_UP_POLL
            subscription = self.subscriptions.get(game_id)
        self.send(accepted)
        if subscription is None:
            return
        if subscription.awaiting == version:
            subscription.awaiting, subscription.own_frame = None, b""
            for frame in subscription.held:
                self.send(frame)
            subscription.held = []
        elif subscription.version == version - 1:
            subscription.version = version
        elif subscription.version is not None and subscription.version < version - 1:
            self.spawn_resync(subscription)  # the patches before it never came

    def release_own(self, game_id: str) -> None:
        """The socket's move failed after it was stored (say ``not_replicated``): send its
        patch, held for the ``accepted`` that will not come, and the frames after it."""
        subscription = self.subscriptions.get(game_id)
        if subscription is None or subscription.awaiting is None:
            return
        self.send(subscription.own_frame)
        for frame in subscription.held:
            self.send(frame)
        subscription.awaiting, subscription.own_frame, subscription.held = None, b"", []

    # -- patches ------------------------------------------------------------

    def on_patch(self, game_id: str, patch: Patch | None) -> None:
        """Called by the hub for each published patch (None: resync needed)."""
        subscription = self.subscriptions.get(game_id)
        if subscription is None:
            return
        if patch is None:
            if subscription.version is not None:
                self.spawn_resync(subscription)
            return
        start, end, frame, origin = patch
        if subscription.version is None:
            subscription.pending.append((start, end, frame))
        elif end <= subscription.version:
            return
        elif start != subscription.version:
            self.spawn_resync(subscription)
        elif origin == self.tag and self.moving == game_id:
            # This socket's move, its ``accepted`` not sent yet: that carries the patch.
            subscription.version = subscription.awaiting = end
            subscription.own_frame = frame
        elif subscription.awaiting is not None:
            subscription.version = end
            subscription.held.append(frame)
        else:
            subscription.version = end
            self.send(frame)

    async def resync(self, subscription: Subscription, version: int | None) -> None:
        """Bring the client from ``version`` to now: missed patches or a snapshot."""
        subscription.version = None
        subscription.pending = []
        subscription.awaiting, subscription.own_frame, subscription.held = None, b"", []
        patches = await self.service.resync(subscription.game_id, version)
        snapshot = None
        if patches is None:
            snapshot = await self.service.snapshot(subscription.game_id, self.player_id)
        if self.subscriptions.get(subscription.game_id) is not subscription:
            # A newer subscribe (or an unsubscribe) came meanwhile: send nothing of this one.
            return
        if snapshot is not None:
            self.send({"type": "snapshot", "game_id": subscription.game_id, "snapshot": snapshot})
            current = snapshot["version"]
        else:
            current = version or 0
            for frame in patches or ():
                self.send(frame)
                current += 1
        for start, end, frame in sorted(subscription.pending):
            if end <= current:
                continue
            if start != current:
                await self.resync(subscription, current)
                return
            self.send(frame)
            current = end
        subscription.pending = []
        subscription.version = current

    async def close(self) -> None:
        if self.player_id is not None:
            self.service.revocations.unwatch(self.player_id, self.on_revoked)
        for game_id in list(self.subscriptions):
            await self.hub.remove(game_id, self.on_patch)
        self.subscriptions.clear()
        for task in list(self.tasks):
            task.cancel()


HANDLERS = {
    "auth": Connection.on_auth,
    "ping": Connection.on_ping,
    "subscribe": Connection.on_subscribe,
    "unsubscribe": Connection.on_unsubscribe,
    "move": Connection.on_move,
}


async def websocket_endpoint(websocket: WebSocket) -> None:
    # Taken before the first await: the transport leaves the scope as its connection is
    # lost (server.wstransport), which can be at any await of the opening.
    transport: WebSocketProtocol | None = websocket.scope["extensions"].get(SCOPE_KEY)
    if transport is None:
        return  # lost before the app ran: there is no one to answer
    await websocket.accept()
    state = websocket.app.state
    limiter: Limiter = state.limits
    address = client_address(websocket.scope)
    try:
        connection_id = await limiter.connect(address)
    except (ApiError, RedisError, OSError) as error:
        if not isinstance(error, ApiError):
            error = ApiError("store_unavailable", "the store is unreachable; reconnect later")
        refusal = {"type": "error", "in_reply_to": None, "game_id": None, **error.body()}
        with contextlib.suppress(Exception):
            await websocket.send_bytes(pack(refusal))
            await websocket.close(
                CLOSE_POLICY_VIOLATION
                if error.code == "too_many_connections"
                else CLOSE_TRY_AGAIN_LATER
            )
        return
    try:
        await serve(Connection(websocket, transport, state.service, state.hub, limiter, address))
    finally:
        limiter.disconnect(connection_id)


async def retired_endpoint(websocket: WebSocket) -> None:
    """``/v1/ws``: retired (its patches were the long form); tells the client where to go."""
    await websocket.accept()
    retired = ApiError("protocol_retired", "WebSocket protocol v1 is retired: use /v2/ws")
    with contextlib.suppress(Exception):
        await websocket.send_bytes(
            pack({"type": "error", "in_reply_to": None, "game_id": None, **retired.body()})
        )
        await websocket.close(CLOSE_POLICY_VIOLATION)


async def serve(connection: Connection) -> None:
    """Read the client's frames until it leaves (or is closed)."""
    try:
        while True:
            message = await connection.websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            await connection.handle(message.get("bytes"))
    except WebSocketDisconnect:
        pass
    finally:
        await connection.close()
