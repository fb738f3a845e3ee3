"""``--ws-compression``: what a client offering permessage-deflate as browsers do gets, and
that frames deflated either way reach it intact (README.md, "WebSocket compression")."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import httpx
import msgpack
import pytest
from server_support import Api, WSClient, run_app
from websockets.asyncio.client import connect
from websockets.extensions.base import Extension
from websockets.extensions.permessage_deflate import (
    ClientPerMessageDeflateFactory,
    PerMessageDeflate,
)
from websockets.frames import Frame
from websockets.typing import ExtensionParameter

from server.config import Settings
from server.wstransport import MIN_DEFLATED_ALONE, build_frame

#: The Sec-WebSocket-Extensions answer of each mode (None: no extension).
NEGOTIATED = {
    "message": "permessage-deflate; server_no_context_takeover; client_no_context_takeover; "
    "server_max_window_bits=12; client_max_window_bits=9",
    "context": "permessage-deflate; server_max_window_bits=12; client_max_window_bits=9",
    "off": None,
}


@pytest.fixture(scope="module")
def redis_mode() -> str:
    """Compression does not depend on the store: the standalone Redis only."""
    return "standalone"


class CountingDeflate(PerMessageDeflate):
    """The client's permessage-deflate, counting the messages that came deflated."""

    deflated = 0

    def decode(self, frame: Frame, *, max_size: int | None = None) -> Frame:
        if frame.rsv1:
            CountingDeflate.deflated += 1
        return super().decode(frame, max_size=max_size)


class BrowserLikeOffer(ClientPerMessageDeflateFactory):
    """Offers ``permessage-deflate; client_max_window_bits``, as Chrome and Firefox do."""

    def __init__(self) -> None:
        super().__init__(client_max_window_bits=True)

    def process_response_params(
        self, params: Sequence[ExtensionParameter], accepted_extensions: Sequence[Extension]
    ) -> PerMessageDeflate:
        negotiated = super().process_response_params(params, accepted_extensions)
        return CountingDeflate(
            negotiated.remote_no_context_takeover,
            negotiated.local_no_context_takeover,
            negotiated.remote_max_window_bits,
            negotiated.local_max_window_bits,
        )


@pytest.mark.parametrize("mode", list(NEGOTIATED))
async def test_a_browser_offer_gets_the_configured_parameters(redis_url: str, mode: str) -> None:
    async with (
        run_app(redis_url, ws_compression=mode) as running,
        httpx.AsyncClient(base_url=running.base_url) as http,
    ):
        api = Api(http)
        owner = await api.player()
        # Colorado's snapshot lists its many legal moves for its owner: over a kilobyte,
        # deflated in both modes (smaller messages go plain when deflated on their own).
        game = await api.create_game(owner, "colorado", "compression")
        CountingDeflate.deflated = 0
        async with connect(
            running.ws_url, extensions=[BrowserLikeOffer()], compression=None
        ) as connection:
            assert connection.response is not None
            answer = connection.response.headers.get("Sec-WebSocket-Extensions")
            assert answer == NEGOTIATED[mode]
            client = WSClient(connection)
            await client.auth(owner)
            await client.subscribe(game["id"])
            snapshot = await client.recv("snapshot")
            assert snapshot["snapshot"]["version"] == game["version"]
            for version in range(game["version"], game["version"] + 3):
                move = next(m for m in game["legal_moves"] if m not in ("undo", "resign"))
                game = (await api.move(owner, game["id"], move, version))["snapshot"]
                await client.recv("patch")
            # The snapshot came deflated; nothing did when off.
            assert (CountingDeflate.deflated > 0) == (mode != "off")


def test_a_shared_frame_deflates_only_messages_worth_it() -> None:
    small = msgpack.packb({"type": "pong", "nonce": 1})
    assert len(small) < MIN_DEFLATED_ALONE
    assert build_frame(small, 12) == bytes([0x82, len(small)]) + small
    # A mover's ``accepted`` (a few hundred bytes) goes plain too: not worth its CPU.
    medium = msgpack.packb({"type": "patch", "ops": [["move", "tableau[1]", "JC"]] * 30})
    assert 126 <= len(medium) < MIN_DEFLATED_ALONE
    assert build_frame(medium, 12) == bytes([0x82, 126]) + len(medium).to_bytes(2, "big") + medium
    large = msgpack.packb({"type": "patch", "ops": [["move", "tableau[1]", "JC"]] * 20})
    # The same message again and others after it: each frame inflates on its own (the
    # worker's compressor refers to nothing it deflated before).
    for ops in (60, 60, 90, 60):
        message = msgpack.packb({"type": "patch", "ops": [["move", "tableau[1]", "JC"]] * ops})
        frame = build_frame(message, 12)
        assert frame[0] == 0x82 | 0x40  # FIN, RSV1 (deflated), binary
        payload = frame[4:] if frame[1] == 126 else frame[2:]
        assert len(payload) == (frame[1] if frame[1] < 126 else int.from_bytes(frame[2:4], "big"))
        inflater = zlib.decompressobj(-12)
        assert inflater.decompress(payload + b"\x00\x00\xff\xff") == message
    assert build_frame(large, None) == bytes([0x82, 126]) + len(large).to_bytes(2, "big") + large


@pytest.mark.parametrize("mode", list(NEGOTIATED))
def test_the_flag_and_the_environment_set_the_mode(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings.from_arguments(["--ws-compression", mode]).ws_compression == mode
    monkeypatch.setenv("WS_COMPRESSION", mode)
    assert Settings.from_environment().ws_compression == mode
    assert Settings.from_environment().to_environment()["WS_COMPRESSION"] == mode


def test_an_unknown_mode_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit):
        Settings.from_arguments(["--ws-compression", "gzip"])
    monkeypatch.setenv("WS_COMPRESSION", "gzip")
    with pytest.raises(SystemExit):
        Settings.from_arguments([])
    assert Settings().ws_compression == "message"
