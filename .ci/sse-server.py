"""A server-sent event producer that is not ours, for the interoperability suite.

The library's event parser must read bytes it did not write. This ASGI app (Starlette, served by
uvicorn) makes its events with sse-starlette's own encoder (`ServerSentEvent`, or dicts that
`EventSourceResponse` turns into one). CI (.ci/run) starts it on 127.0.0.1 and exports
MOYA_SSE_URL. Versions (pinned in .ci/run, checked on Python 3.11):
sse-starlette==3.7.0 starlette==1.10.0 uvicorn==0.54.0 h11==0.16.0 anyio==4.16.0.

    python3 .ci/sse-server.py --port 8080 [--host 127.0.0.1]

Every event stream answers 200 with `Content-Type: text/event-stream; charset=utf-8`,
`Cache-Control: no-store`, `Connection: keep-alive`, `X-Accel-Buffering: no`, chunked; each
event (or comment block) is one chunk; keep-alive pings are off, so nothing else is sent. The
encoder writes a block's lines in this order: comment, id, event, data (one `data` line per line
of the text), retry, then an empty line.

What each route sends (SEP is the route's line separator):

GET /sse/basic (SEP = "\n"), then the stream ends:
    : sse-starlette basic stream                  (a comment block: no event)
    id: 1 / event: greeting / data: hello
    id: 2 / data: line one / data: line two / data: line three
    event: config / data: reconnect after 2.5 s / retry: 2500
    : a comment inside an event / event: note / data:   two leading spaces: kept, a colon: kept
    id: 3 / event: empty / data:                  ("data: " with an empty value)
    id:  / data: the id is reset                  ("id: " with an empty value)
    id: 4 / event: bye / data: last event
  Dispatched: 7 events (see EXPECTED below); the stream's last event ID ends as "4" and its
  reconnection time as 2500.

GET /sse/unicode (SEP = "\n"), then the stream ends:
    id: 1 / event: unicode / data: héllo wörld ✓
    id: 2 / data: 日本語のテキスト, 中文, 한국어
    id: 3 / data: emoji 🎉🚀, a flag 🇫🇷, a family 👨‍👩‍👧
    id: 4 / event: ñandú / data: première ligne / data: zweite Zeile ✓ / data: 第三行

GET /sse/crlf (SEP = "\r\n", sse-starlette's default) and GET /sse/cr (SEP = "\r"), then the
stream ends:
    : line endings / id: 1 / event: line-endings / data: first line / data: second line
    id: 2 / data: after a retry / retry: 1000
    id: 3 / data: third / data: with a CRLF inside   (the text had "\r\n"; the encoder splits it)

  The fixed routes above answer 204 No Content to a request that carries a Last-Event-ID
  header: a client that reconnects after the stream ended is told to stop.

GET /sse/count/<n>[?key=K&retry_ms=R] (SEP = "\n"): the events 1...n, `id: i` / `data: i` (no
  event type), at most 3 per connection, then the response ends so the client must reconnect.
  A connection starts after the request's Last-Event-ID (an integer; absent or unparsable: 0);
  once it is >= n the answer is 204 No Content. With retry_ms, each 200 response starts with a
  block `retry: R` alone (no event). With key, the request's Last-Event-ID (or null) is
  recorded under K, in arrival order: GET /sse/log/<K> answers them as a JSON list.

GET /sse/expected: JSON, for each route, the events a conforming parser dispatches, as objects
  {"event", "data", "id", "retry"} in the library's meaning (event null for the default type
  "message"; id the stream's last event ID when the event was dispatched, null when empty;
  retry the value of the block's own retry field, else null), with the stream's final
  "lastEventID" and "reconnectionTime", the "separator" and the "contentType".

GET /health: 200 "ok".
"""

import argparse
import threading

import uvicorn
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

EVENTS_PER_CONNECTION = 3


def basic_events(sep):
    return [
        ServerSentEvent(comment="sse-starlette basic stream", sep=sep),
        ServerSentEvent(id="1", event="greeting", data="hello", sep=sep),
        ServerSentEvent(id="2", data="line one\nline two\nline three", sep=sep),
        ServerSentEvent(event="config", data="reconnect after 2.5 s", retry=2500, sep=sep),
        ServerSentEvent(
            comment="a comment inside an event",
            event="note",
            data="  two leading spaces: kept, a colon: kept",
            sep=sep,
        ),
        ServerSentEvent(id="3", event="empty", data="", sep=sep),
        ServerSentEvent(id="", data="the id is reset", sep=sep),
        ServerSentEvent(id="4", event="bye", data="last event", sep=sep),
    ]


# Dicts: EventSourceResponse encodes them with its own separator.
UNICODE_EVENTS = [
    {"id": "1", "event": "unicode", "data": "héllo wörld ✓"},
    {"id": "2", "data": "日本語のテキスト, 中文, 한국어"},
    {"id": "3", "data": "emoji 🎉🚀, a flag 🇫🇷, a family 👨\u200d👩\u200d👧"},
    {"id": "4", "event": "ñandú", "data": "première ligne\nzweite Zeile ✓\n第三行"},
]


def line_ending_events(sep):
    return [
        ServerSentEvent(comment="line endings", id="1", event="line-endings", data="first line\nsecond line", sep=sep),
        ServerSentEvent(id="2", data="after a retry", retry=1000, sep=sep),
        ServerSentEvent(id="3", data="third\r\nwith a CRLF inside", sep=sep),
    ]


def event(data, event=None, id=None, retry=None):
    return {"event": event, "data": data, "id": id, "retry": retry}


LINE_ENDING_EXPECTED = [
    event("first line\nsecond line", event="line-endings", id="1"),
    event("after a retry", id="2", retry=1000),
    event("third\nwith a CRLF inside", id="3"),
]

# Written by hand from the standard ("Interpreting an event stream"), not derived from the lists
# above, so that a mistake in either shows.
EXPECTED = {
    "/sse/basic": {
        "separator": "\n",
        "events": [
            event("hello", event="greeting", id="1"),
            event("line one\nline two\nline three", id="2"),
            event("reconnect after 2.5 s", event="config", id="2", retry=2500),
            event("  two leading spaces: kept, a colon: kept", event="note", id="2"),
            event("", event="empty", id="3"),
            event("the id is reset", id=None),
            event("last event", event="bye", id="4"),
        ],
        "lastEventID": "4",
        "reconnectionTime": 2500,
    },
    "/sse/unicode": {
        "separator": "\n",
        "events": [
            event("héllo wörld ✓", event="unicode", id="1"),
            event("日本語のテキスト, 中文, 한국어", id="2"),
            event("emoji 🎉🚀, a flag 🇫🇷, a family 👨\u200d👩\u200d👧", id="3"),
            event("première ligne\nzweite Zeile ✓\n第三行", event="ñandú", id="4"),
        ],
        "lastEventID": "4",
        "reconnectionTime": None,
    },
    "/sse/crlf": {
        "separator": "\r\n",
        "events": LINE_ENDING_EXPECTED,
        "lastEventID": "3",
        "reconnectionTime": 1000,
    },
    "/sse/cr": {
        "separator": "\r",
        "events": LINE_ENDING_EXPECTED,
        "lastEventID": "3",
        "reconnectionTime": 1000,
    },
    # An example of /sse/count/<n>: what a reconnecting client sees in all, and the
    # Last-Event-ID of each of its requests (the last one answered 204).
    "/sse/count/7": {
        "separator": "\n",
        "perConnection": EVENTS_PER_CONNECTION,
        "events": [event(str(i), id=str(i)) for i in range(1, 8)],
        "lastEventID": "7",
        "reconnectionTime": None,
        "lastEventIDsSent": [None, "3", "6", "7"],
    },
}
for _route in EXPECTED.values():
    _route["contentType"] = "text/event-stream; charset=utf-8"

last_event_ids_by_key = {}
log_lock = threading.Lock()


def stream(items, sep):
    async def generate():
        for item in items:
            yield item

    return EventSourceResponse(generate(), ping=0, sep=sep)


def fixed(events, sep):
    async def endpoint(request: Request):
        if "last-event-id" in request.headers:
            return Response(status_code=204)
        return stream(events, sep)

    return endpoint


def parse_last_event_id(value):
    try:
        return max(int(value.strip()), 0)
    except (AttributeError, ValueError):
        return 0


async def count(request: Request):
    try:
        total = int(request.path_params["n"])
        retry = request.query_params.get("retry_ms")
        retry = None if retry is None else int(retry)
    except ValueError:
        return JSONResponse({"error": "n and retry_ms must be integers"}, status_code=400)
    header = request.headers.get("last-event-id")
    key = request.query_params.get("key")
    if key is not None:
        with log_lock:
            last_event_ids_by_key.setdefault(key, []).append(header)
    last = parse_last_event_id(header)
    if last >= total:
        return Response(status_code=204)
    items = []
    if retry is not None:
        items.append({"retry": retry})
    for i in range(last + 1, min(last + EVENTS_PER_CONNECTION, total) + 1):
        items.append({"id": str(i), "data": str(i)})
    return stream(items, "\n")


async def log(request: Request):
    with log_lock:
        return JSONResponse(last_event_ids_by_key.get(request.path_params["key"], []))


async def expected(request: Request):
    return JSONResponse(EXPECTED)


async def health(request: Request):
    return PlainTextResponse("ok")


app = Starlette(
    routes=[
        Route("/sse/basic", fixed(basic_events("\n"), "\n")),
        Route("/sse/unicode", fixed(UNICODE_EVENTS, "\n")),
        Route("/sse/crlf", fixed(line_ending_events("\r\n"), "\r\n")),
        Route("/sse/cr", fixed(line_ending_events("\r"), "\r")),
        Route("/sse/count/{n}", count),
        Route("/sse/log/{key}", log),
        Route("/sse/expected", expected),
        Route("/health", health),
    ]
)

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    # A long keep-alive, as for httpbin: a client must not meet a pooled connection that the
    # server has just closed.
    uvicorn.run(
        app,
        host=arguments.host,
        port=arguments.port,
        http="h11",
        loop="asyncio",
        lifespan="off",
        timeout_keep_alive=120,
        log_level="warning",
    )
