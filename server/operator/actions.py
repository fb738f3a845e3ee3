"""What operators do to attempts and players (``protocol/OPERATOR.md``), each action
written to the trail (:mod:`server.operator.trail`) when it changed something.

* void / reinstate a ranked attempt: its board entry leaves the ranking (a mark in the
  board's own slot, ``server.leaderboard``), at once for every instance, which all read
  the board from Redis; its game, log and entry are kept, and its player sees the void's
  reason code in their history;
* suspend / unsuspend a player (:mod:`server.operator.suspension`): no new ranked
  attempt, their entries hidden from every board meanwhile;
* reset a display name to a neutral one, the old one reserved (``server.players``);
* revoke every token of a player: ``server.accounts.revocation.revoke_tokens``, the one
  way tokens are revoked.

A refused call changes nothing: every check comes before the first write.
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any

from server.errors import ApiError
from server.leaderboard import board_keys, mark_keys
from server.operator import suspension, trail
from server.operator.credentials import SYSTEM
from server.players import games_key, name_key, player_key
from server.store import StoredGame

if TYPE_CHECKING:
    from server.service import GameService

#: A void's reason codes: what its player sees (the reason text is for operators).
VOID_CODES = ("integrity", "fair_play", "scouting", "abuse", "other")
#: Attempts per page of ``GET /v1/operator/attempts`` (the default and the most).
ATTEMPTS_PAGE = 100, 1000
#: Tries at a free neutral name.
NEUTRAL_TRIES = 5


def neutral_name() -> str:
    return f"player-{secrets.token_hex(4)}"


class Operations:
    """The operator actions over one service (``app.state.operations``)."""

    def __init__(self, service: GameService, keep_days: int = trail.KEEP_DAYS) -> None:
        self.service = service
        self.redis: Any = service.store.redis
        self.keep_days = keep_days

    async def log(self, operator: str, action: str, reason: str, **target: Any) -> None:
        await trail.record(
            self.redis,
            operator=operator,
            action=action,
            now_ms=self.service.clock(),
            reason=reason,
            keep_days=self.keep_days,
            **target,
        )

    # -- attempts -------------------------------------------------------------------

    async def attempt(self, game_id: str) -> StoredGame:
        """The ranked attempt ``game_id``, or ``unknown_attempt``."""
        stored = None
        if len(game_id) <= 64:
            stored = await self.service.store.load(game_id)
        if stored is None or not stored.daily:
            raise ApiError("unknown_attempt", f"no ranked attempt {game_id[:64]!r}")
        return stored

    async def attempts(self, game: str, date: str, offset: int, limit: int) -> dict[str, Any]:
        """A day's ranked attempts: ranked ones in board order, then the others (voided,
        hidden, or not on the board yet) by player id."""
        index = await self.redis.hgetall(f"daily:{{{game}:{date}}}:attempts")
        game_of = {player.decode(): game_id.decode() for player, game_id in index.items()}
        board, entries_key = board_keys(game, date)
        ranked = [
            member.decode().rsplit(".", 1)[1] for member in await self.redis.zrange(board, 0, -1)
        ]
        on_board = set(ranked)
        order = ranked + sorted(player for player in game_of if player not in on_board)
        players = order[offset : offset + limit]
        rank = {player: position + 1 for position, player in enumerate(ranked)}
        items = []
        if players:
            entries = await self.redis.hmget(entries_key, players)
            voided_key, hidden_key = mark_keys(game, date)
            voids = await self.redis.hmget(voided_key, players)
            hidden = await self.redis.hmget(hidden_key, players)
            names = await self.service.players.names(players)
            for player, entry, void, hide, name in zip(
                players, entries, voids, hidden, names, strict=True
            ):
                value = json.loads(entry) if entry is not None else {}
                game_id = game_of.get(player) or value.get("game_id")
                items.append(
                    {
                        "game_id": game_id,
                        "player_id": player,
                        "name": name,
                        "rank": rank.get(player),
                        "status": value.get("status"),
                        "score": value.get("score"),
                        "moves": value.get("moves"),
                        "elapsed_ms": value.get("elapsed_ms"),
                        "voided": None if void is None else json.loads(void),
                        "hidden": hide is not None,
                        "replay": f"/v1/games/{game_id}/replay" if game_id else None,
                    }
                )
        return {"game": game, "date": date, "total": len(order), "attempts": items}

    async def attempt_view(self, stored: StoredGame) -> dict[str, Any]:
        boards = self.service.leaderboards
        void = (await boards.voids(stored.game, stored.daily, [stored.owner]))[0]
        entry = await boards.entry(stored.game, stored.daily, stored.owner)
        index = None
        if entry is not None:
            index = await self.redis.zrank(board_keys(stored.game, stored.daily)[0], entry.member())
        return {
            "game_id": stored.id,
            "player_id": stored.owner,
            "game": stored.game,
            "date": stored.daily,
            "rank": None if index is None else index + 1,
            "voided": None if void is None else json.loads(void),
        }

    async def void(
        self,
        operator: str,
        game_id: str,
        reason: str,
        code: str = "fair_play",
        logged: bool = True,
    ) -> dict[str, Any]:
        """Take an attempt off its board (idempotent: a second void changes nothing);
        ``logged``: in the trail as ``void`` (a review's decision writes its own)."""
        stored = await self.attempt(game_id)
        now = self.service.clock()
        value = json.dumps({"code": code, "reason": reason, "at": now, "operator": operator})
        boards = self.service.leaderboards
        changed = await boards.mark(stored.game, stored.daily, stored.owner, "voided", value)
        if changed and logged:
            details = {"code": code, "game": stored.game, "date": stored.daily}
            await self.log(
                operator, "void", reason, player_id=stored.owner, game_id=game_id, details=details
            )
        return {**await self.attempt_view(stored), "changed": changed}

    async def reinstate(
        self, operator: str, game_id: str, reason: str, logged: bool = True
    ) -> dict[str, Any]:
        """Undo a void: the entry is ranked again (unless its player is suspended)."""
        stored = await self.attempt(game_id)
        boards = self.service.leaderboards
        changed = await boards.unmark(stored.game, stored.daily, stored.owner, "voided")
        if changed and logged:
            details = {"game": stored.game, "date": stored.daily}
            await self.log(
                operator,
                "reinstate",
                reason,
                player_id=stored.owner,
                game_id=game_id,
                details=details,
            )
        return {**await self.attempt_view(stored), "changed": changed}

    # -- players --------------------------------------------------------------------

    async def check_player(self, player_id: str) -> None:
        if len(player_id) > 64 or not await self.redis.exists(player_key(player_id)):
            raise ApiError("unknown_player", f"no player {player_id[:64]!r}")

    async def ranked_boards(self, player_id: str) -> list[tuple[str, str]]:
        """The boards (game, date) of the player's ranked attempts still kept."""
        members = await self.redis.zrange(games_key(player_id), 0, -1)
        ids = [member.decode().split(".", 1)[1] for member in members]
        found = await self.service.store.load_many(ids)
        return sorted(
            {(stored.game, stored.daily) for stored in found if stored is not None and stored.daily}
        )

    async def player_view(self, player_id: str) -> dict[str, Any]:
        now = self.service.clock()
        return {
            "player_id": player_id,
            "name": await self.service.players.name(player_id),
            "suspension": await suspension.read(self.redis, player_id, now),
        }

    async def suspend(
        self, operator: str, player_id: str, reason: str, until: int | None
    ) -> dict[str, Any]:
        await self.check_player(player_id)
        now = self.service.clock()
        if until is not None and until <= now:
            raise ApiError("invalid_field", "until is a Unix ms time still to come", field="until")
        await suspension.write(self.redis, player_id, reason, until, operator, now)
        for game, date in await self.ranked_boards(player_id):
            await self.service.leaderboards.mark(game, date, player_id, "hidden", "suspended")
        await self.log(operator, "suspend", reason, player_id=player_id, details={"until": until})
        return {**await self.player_view(player_id), "changed": True}

    async def unsuspend(self, operator: str, player_id: str, reason: str) -> dict[str, Any]:
        await self.check_player(player_id)
        changed = await self.lift(player_id)
        if changed:
            await self.log(operator, "unsuspend", reason, player_id=player_id)
        return {**await self.player_view(player_id), "changed": changed}

    async def lift(self, player_id: str) -> bool:
        """End the player's suspension and show their entries again: whether this call
        ended it (the record, or the registry entry of one that expired by itself)."""
        had_record = await suspension.remove(self.redis, player_id)
        for game, date in await self.ranked_boards(player_id):
            await self.service.leaderboards.unmark(game, date, player_id, "hidden")
        return await suspension.forget(self.redis, player_id) or had_record

    async def lift_expired(self) -> int:
        """Lift every suspension whose ``until`` has passed (on any instance; the trail
        has it once, as ``system``): how many this call lifted."""
        lifted = 0
        for player_id in await suspension.ended(self.redis, self.service.clock()):
            for game, date in await self.ranked_boards(player_id):
                await self.service.leaderboards.unmark(game, date, player_id, "hidden")
            if await suspension.forget(self.redis, player_id):
                lifted += 1
                await self.log(SYSTEM, "unsuspend", "the suspension ended", player_id=player_id)
        return lifted

    async def reset_name(self, operator: str, player_id: str, reason: str) -> dict[str, Any]:
        """Give the player a neutral name; their old one may never be taken again."""
        await self.check_player(player_id)
        players = self.service.players
        old = await players.name(player_id)
        changed = old is not None
        if old is not None:
            await players.reserve_name(name_key(old), player_id)
            ttl = self.service.store.player_ttl()
            for attempt in range(NEUTRAL_TRIES):
                try:
                    new = neutral_name()
                    await players.set_name(player_id, new, self.service.clock(), ttl)
                    break
                except ApiError as error:
                    if error.code != "name_taken" or attempt == NEUTRAL_TRIES - 1:
                        raise
            details = {"old_name": old, "new_name": new}
            await self.log(operator, "reset_name", reason, player_id=player_id, details=details)
        return {**await self.player_view(player_id), "changed": changed}

    async def revoke_tokens(self, operator: str, player_id: str, reason: str) -> dict[str, Any]:
        """Revoke every token of the player (refused everywhere within
        ``server.accounts.revocation.REFUSAL_BOUND`` seconds)."""
        await self.check_player(player_id)
        value = await self.service.revocations.revoke(player_id, self.service.clock() / 1000)
        details = {"revoked_before": value * 1000}
        await self.log(operator, "revoke_tokens", reason, player_id=player_id, details=details)
        return {**await self.player_view(player_id), "revoked_before": value * 1000}
