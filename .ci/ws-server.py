"""WebSocket servers that are not ours, for the interoperability suite.

The library's WebSocket client must talk to a peer it did not write. This script serves two
servers of the Python `websockets` package (its asyncio implementation) on 127.0.0.1: one that
accepts permessage-deflate when offered (the package's default), and one that never does. CI
(.ci/run) starts it and exports MOYA_WS_URL and MOYA_WS_PLAIN_URL. Version (pinned in .ci/run,
checked on Python 3.11): websockets==15.0.1.

    python3 .ci/ws-server.py --port 8765 --plain-port 8766 [--host 127.0.0.1]

Both servers have the package's defaults but for the limit on what they receive (none: the
benchmarks send 16 MiB messages), with keepalive pings every 20 s, and answer every path alike:

GET /echo              every message is sent back as it came (text as text, binary as binary).
GET /close/<code>      sends the text "bye", then closes with <code> and the reason "closing".
GET /headers           sends one text message: the handshake's request headers as a JSON object
                       (names in lower case, repeated names joined with ", "), then echoes.
GET /big/<n>           sends one binary message of <n> bytes (byte i is i % 251), then echoes.
GET /zeros/<n>         sends one binary message of <n> zero bytes (a compression bomb when
                       compressed: 16 MiB of zeros deflate to about 16 KiB), then echoes.
GET /ping              sends a ping with the payload "probe" and waits up to 5 s for its pong;
                       sends the text "pong received" or "no pong", then echoes.
GET /subprotocol       (with subprotocols chat.v2 and chat.v1 offered by the server) sends the
                       subprotocol it chose, or "none", then echoes.
GET /extensions        sends the extensions the server agreed to ("permessage-deflate; ..." or
                       "none"), then echoes.
GET /health            answers 200 "ok" over plain HTTP (no upgrade).
"""

import argparse
import asyncio
import json
from http import HTTPStatus

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


def health(connection, request):
    if request.path == "/health":
        return connection.respond(HTTPStatus.OK, "ok\n")
    return None


async def echo(websocket):
    async for message in websocket:
        await websocket.send(message)


async def handler(websocket):
    path = websocket.request.path
    try:
        if path.startswith("/close/"):
            await websocket.send("bye")
            await websocket.close(int(path.split("/")[2]), "closing")
            return
        if path == "/headers":
            headers = {}
            for name, value in websocket.request.headers.raw_items():
                key = name.lower()
                headers[key] = headers[key] + ", " + value if key in headers else value
            await websocket.send(json.dumps(headers))
        elif path.startswith("/big/"):
            size = int(path.split("/")[2])
            await websocket.send(bytes(i % 251 for i in range(size)))
        elif path.startswith("/zeros/"):
            await websocket.send(bytes(int(path.split("/")[2])))
        elif path == "/ping":
            waiter = await websocket.ping(b"probe")
            try:
                await asyncio.wait_for(waiter, 5)
                await websocket.send("pong received")
            except asyncio.TimeoutError:
                await websocket.send("no pong")
        elif path == "/subprotocol":
            await websocket.send(websocket.subprotocol or "none")
        elif path == "/extensions":
            names = [extension.name for extension in websocket.protocol.extensions]
            await websocket.send(", ".join(names) if names else "none")
        await echo(websocket)
    except ConnectionClosed:
        pass


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--plain-port", type=int, required=True)
    arguments = parser.parse_args()
    def select(connection, offered):
        for choice in ("chat.v2", "chat.v1"):
            if choice in offered:
                return choice
        return None
    common = dict(process_request=health, subprotocols=["chat.v2", "chat.v1"], select_subprotocol=select, max_size=None)
    async with serve(handler, arguments.host, arguments.port, **common), serve(
        handler, arguments.host, arguments.plain_port, compression=None, **common
    ):
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main())
