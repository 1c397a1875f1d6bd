#!/usr/bin/env bash
# A small network of our own inside this machine, for the tests of real-network conditions: a
# network namespace joined to the host by a link that delays, loses, reorders or throttles
# packets, or goes down, and nginx serving files inside the namespace.
#
# The kernel of this machine (and CI's) has no `netem` queueing discipline, so the link is two TUN
# devices joined by a small user-space program, .ci/netem-wire.py, which copies the IP packets
# across and applies the conditions; both kernels run real TCP over it.
#
#   eval "$(bash .ci/netem.sh start)"               # creates it, prints the `export` lines below
#   bash .ci/netem.sh set delay 200ms 50ms loss 5%   # replaces the conditions (netem's words:
#                                                    # delay D [J], loss P%, reorder P%, rate R,
#                                                    # limit PACKETS)
#   bash .ci/netem.sh clear                          # no conditions
#   bash .ci/netem.sh down | up                      # takes the link down, brings it back
#   bash .ci/netem.sh reset                          # no conditions, the link up, MTU 1500
#   bash .ci/netem.sh mtu 576                        # the link's MTU, both ends
#   bash .ci/netem.sh stop                           # removes everything `start` made
#
#   MOYA_NETEM_URL=http://10.213.0.2:8080         nginx over plain HTTP/1.1
#   MOYA_NETEM_TLS_URL=https://10.213.0.2:8443    nginx over TLS, HTTP/2 by ALPN
#   MOYA_NETEM_CERT=<path>                        the self-signed certificate nginx presents
#   MOYA_NETEM_SCRIPT=<path of this script>       for the tests, which change the conditions
#   MOYA_NETEM_SSE_URL=http://10.213.0.2:8090     the event server (only when it could start)
#
# nginx serves $MOYA_NETEM_DIR/www (default .build/ci-netem/www): `1m.bin` and `8m.bin`
# (random bytes, with ETag and Last-Modified, and byte ranges as nginx serves them), and
# `hello.txt`, on both ports. `POST` or `PUT /upload` takes a body of up to 64 MiB: nginx reads
# all of it first (proxy request buffering), then a sink inside the namespace answers 200 with
# the number of bytes nginx received, so the answer means the whole upload arrived.
#
# The event server is the project's sse-starlette server (.ci/sse-server.py, every route it
# documents) with one more route for streams that stay open, /sse/ticks/<n> (see start_sse
# below); it runs from the venv .ci/run makes for it ($MOYA_SSE_VENV, default .build/sse-venv)
# and is left out, with a note on standard error, when that venv is missing.
#
# What the conditions mean (.ci/netem-wire.py applies them to each packet, both directions):
#   delay D [J]   each packet waits D ± J (uniform); with J packets overtake each other
#   loss P%       P % of packets are dropped at random
#   reorder P%    P % of packets skip the delay (sent at once, ahead of the others)
#   rate R        the link sends R (kbit, mbit) a second; packets queue behind each other, at
#                 most 200 ms, and one that would wait longer is dropped, as a router drops it
#   limit N       at most N packets wait in each direction (1000, netem's default)
#   down          every packet is dropped, those already waiting too; TCP connections stay
#                 open on both ends and stall, as when a cable is pulled or a radio drops out
#   mtu M         the MTU of both ends (the kernels then send smaller segments)
# Tests/MoyaTests/Network/NetworkConditionTests.swift says what the tests assert under each.
#
# Needs root (network namespaces, TUN devices) and Debian's iproute2, nginx-light and openssl,
# which `start` installs when missing. Only the `export` lines go to standard output.
set -euo pipefail
cd "$(dirname "$0")/.."

NS=moya-netem
HOST_DEV=moya-tun0
NS_DEV=moya-tun1
HOST_IP=10.213.0.1
NS_IP=10.213.0.2
SSE_PORT=8090
STATE_DIR="$(pwd)/${MOYA_NETEM_DIR:-.build/ci-netem}"

log() { echo "netem: $*" >&2; }

install_packages() {
    local missing=()
    command -v ip >/dev/null 2>&1 || missing+=(iproute2)
    command -v nginx >/dev/null 2>&1 || missing+=(nginx-light)
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

in_ns() { ip netns exec "$NS" "$@"; }

# Waits up to $2 tenths of a second for $1 to answer with a success; otherwise prints the log $3
# and fails, naming the server $4.
wait_until_answers() {
    local url="$1" tries="$2" logfile="$3" what="$4"
    for _ in $(seq 1 "$tries"); do
        curl -s -o /dev/null --fail "$url" && return 0
        sleep 0.1
    done
    cat "$logfile" >&2 || true
    log "$what does not answer inside the namespace"
    exit 1
}

# Writes the conditions file the wire reads: `set` replaces the conditions (keeping whether the
# link is down), `down`/`up` change only that.
write_conditions() {
    python3 - "$STATE_DIR/conditions.json" "$@" <<'PY'
import json, os, sys
path, words = sys.argv[1], sys.argv[2:]
try:
    current = json.load(open(path))
except (OSError, ValueError):
    current = {}
def seconds_ms(word):
    for unit, factor in (("ms", 1), ("us", 0.001), ("s", 1000)):
        if word.endswith(unit):
            return float(word[: -len(unit)]) * factor
    return float(word)
def share(word):
    return float(word.rstrip("%")) / 100
def kbit(word):
    for unit, factor in (("kbit", 1), ("mbit", 1000), ("gbit", 1000000)):
        if word.lower().endswith(unit):
            return float(word[: -len(unit)]) * factor
    return float(word) / 1000
if words and words[0] in ("down", "up"):
    current["down"] = words[0] == "down"
else:
    new = {"down": current.get("down", False)}
    index = 0
    while index < len(words):
        word = words[index]
        if word == "delay":
            new["delay_ms"] = seconds_ms(words[index + 1])
            index += 2
            if index < len(words) and words[index][0].isdigit():
                new["jitter_ms"] = seconds_ms(words[index])
                index += 1
        elif word in ("loss", "reorder"):
            new[word] = share(words[index + 1])
            index += 2
        elif word == "rate":
            new["rate_kbit"] = kbit(words[index + 1])
            index += 2
        elif word == "limit":
            new["limit"] = int(words[index + 1])
            index += 2
        else:
            sys.exit("netem: unknown condition " + word)
    current = new
temporary = path + ".tmp"
with open(temporary, "w") as file:
    json.dump(current, file)
os.replace(temporary, path)
PY
    # The wire reads the file again every 50 ms.
    sleep 0.1
}

stop() {
    if [ -f "$STATE_DIR/sse.pid" ]; then
        kill "$(cat "$STATE_DIR/sse.pid")" 2>/dev/null || true
        rm -f "$STATE_DIR/sse.pid"
    fi
    if [ -f "$STATE_DIR/nginx.pid" ]; then
        in_ns nginx -c "$STATE_DIR/nginx.conf" -p "$STATE_DIR" -s stop 2>/dev/null || true
    fi
    if [ -f "$STATE_DIR/wire.pid" ]; then
        kill "$(cat "$STATE_DIR/wire.pid")" 2>/dev/null || true
        rm -f "$STATE_DIR/wire.pid"
    fi
    ip netns del "$NS" 2>/dev/null || true
}

# The project's sse-starlette server (.ci/sse-server.py, every route it has) inside the namespace,
# plus one route of its own for streams that stay open: /sse/ticks/<n>?interval_ms=I[&key=K]
# sends the events i+1...n (`id: i` / `data: i`), one every I ms (200 by default), on one
# connection, where i is the request's Last-Event-ID (absent or unparsable: 0); once i >= n the
# answer is 204. Like /sse/count, with `key` it logs each request's Last-Event-ID for
# /sse/log/<K>. Started only when the venv that .ci/run makes for sse-starlette exists
# ($MOYA_SSE_VENV, default .build/sse-venv); prints the URL, or nothing.
start_sse() {
    local venv="${MOYA_SSE_VENV:-.build/sse-venv}"
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import sse_starlette, uvicorn" 2>/dev/null; then
        log "no sse-starlette venv at $venv: no event server in the namespace (its tests are skipped)"
        return 0
    fi
    cat >"$STATE_DIR/sse-netem.py" <<'PY'
import asyncio
import runpy
import sys

import uvicorn
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

server_path, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
server = runpy.run_path(server_path, run_name="sse_server")


async def ticks(request: Request):
    total = int(request.path_params["n"])
    interval = int(request.query_params.get("interval_ms", "200")) / 1000
    header = request.headers.get("last-event-id")
    key = request.query_params.get("key")
    if key is not None:
        with server["log_lock"]:
            server["last_event_ids_by_key"].setdefault(key, []).append(header)
    last = server["parse_last_event_id"](header)
    if last >= total:
        return Response(status_code=204)

    async def generate():
        for i in range(last + 1, total + 1):
            if i > last + 1:
                await asyncio.sleep(interval)
            yield {"id": str(i), "data": str(i)}

    return EventSourceResponse(generate(), ping=0, sep="\n")


app = server["app"]
app.router.routes.insert(0, Route("/sse/ticks/{n}", ticks))
uvicorn.run(app, host=host, port=port, http="h11", loop="asyncio", lifespan="off", timeout_keep_alive=120, log_level="warning")
PY
    # Not through in_ns: `ip netns exec` replaces itself with python, so $! is the server's pid.
    ip netns exec "$NS" "$(cd "$venv" && pwd)/bin/python" "$STATE_DIR/sse-netem.py" "$(pwd)/.ci/sse-server.py" "$NS_IP" "$SSE_PORT" \
        >"$STATE_DIR/logs/sse.log" 2>&1 </dev/null &
    echo $! >"$STATE_DIR/sse.pid"
    wait_until_answers "http://$NS_IP:$SSE_PORT/health" 100 "$STATE_DIR/logs/sse.log" "the event server"
    echo "http://$NS_IP:$SSE_PORT"
}

start() {
    if [ "$(id -u)" != 0 ]; then
        log "needs root (network namespaces and tc)"
        exit 1
    fi
    install_packages
    stop
    mkdir -p "$STATE_DIR/www" "$STATE_DIR/logs"
    # nginx's workers run as an unprivileged user: they must be able to read the files.
    chmod 755 "$STATE_DIR" "$STATE_DIR/www"
    head -c $((1 << 20)) /dev/urandom >"$STATE_DIR/www/1m.bin"
    head -c $((8 << 20)) /dev/urandom >"$STATE_DIR/www/8m.bin"
    echo "hello" >"$STATE_DIR/www/hello.txt"
    chmod 644 "$STATE_DIR/www/"*
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$NS_IP" -addext "subjectAltName=IP:$NS_IP" \
        -keyout "$STATE_DIR/key.pem" -out "$STATE_DIR/cert.pem" 2>/dev/null

    ip netns add "$NS"
    echo '{}' >"$STATE_DIR/conditions.json"
    # The wire creates both TUN devices (they live as long as it does) and says "ready".
    python3 .ci/netem-wire.py "$NS" "$HOST_DEV" "$NS_DEV" "$STATE_DIR/conditions.json" >"$STATE_DIR/wire.out" 2>"$STATE_DIR/wire.log" &
    echo $! >"$STATE_DIR/wire.pid"
    for _ in $(seq 1 50); do
        grep -q ready "$STATE_DIR/wire.out" 2>/dev/null && break
        sleep 0.1
    done
    grep -q ready "$STATE_DIR/wire.out" || {
        cat "$STATE_DIR/wire.log" >&2
        log "the wire did not start"
        exit 1
    }
    ip addr add "$HOST_IP/32" peer "$NS_IP" dev "$HOST_DEV"
    ip link set "$HOST_DEV" up
    in_ns ip addr add "$NS_IP/32" peer "$HOST_IP" dev "$NS_DEV"
    in_ns ip link set "$NS_DEV" up
    in_ns ip link set lo up

    cat >"$STATE_DIR/nginx.conf" <<CONF
worker_processes 1;
pid $STATE_DIR/nginx.pid;
error_log $STATE_DIR/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_timeout 120s;
  client_body_temp_path $STATE_DIR/body;
  proxy_temp_path $STATE_DIR/proxy;
  fastcgi_temp_path $STATE_DIR/fastcgi;
  uwsgi_temp_path $STATE_DIR/uwsgi;
  scgi_temp_path $STATE_DIR/scgi;
  # Uploads: nginx reads the whole body (into client_body_temp_path) before it passes the
  # request on to the sink below, which answers with the number of bytes nginx received. So the
  # answer comes only once the upload is complete, and says whether it arrived whole.
  client_max_body_size 64m;
  # Which of nginx's connections carried each response: the tests compare it to tell a reused
  # connection from a new one.
  add_header X-Connection \$connection always;
  server {
    listen 127.0.0.1:8081;
    location / {
      default_type text/plain;
      return 200 "\$http_content_length";
    }
  }
  server {
    listen $NS_IP:8080;
    root $STATE_DIR/www;
    location = /upload {
      proxy_pass http://127.0.0.1:8081;
      proxy_request_buffering on;
    }
  }
  server {
    listen $NS_IP:8443 ssl http2;
    ssl_certificate $STATE_DIR/cert.pem;
    ssl_certificate_key $STATE_DIR/key.pem;
    root $STATE_DIR/www;
    location = /upload {
      proxy_pass http://127.0.0.1:8081;
      proxy_request_buffering on;
    }
  }
}
CONF
    in_ns nginx -c "$STATE_DIR/nginx.conf" -p "$STATE_DIR"
    wait_until_answers "http://$NS_IP:8080/hello.txt" 50 "$STATE_DIR/logs/error.log" "nginx"
    local sse_url
    sse_url="$(start_sse)"
    echo "export MOYA_NETEM_URL=http://$NS_IP:8080"
    echo "export MOYA_NETEM_TLS_URL=https://$NS_IP:8443"
    echo "export MOYA_NETEM_CERT=$STATE_DIR/cert.pem"
    echo "export MOYA_NETEM_SCRIPT=$(pwd)/.ci/netem.sh"
    if [ -n "$sse_url" ]; then
        echo "export MOYA_NETEM_SSE_URL=$sse_url"
    fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
set)
    shift
    write_conditions "$@"
    ;;
clear) write_conditions ;;
down | up) write_conditions "$1" ;;
reset)
    # What `start` leaves: no conditions, the link up, an MTU of 1500.
    echo '{}' >"$STATE_DIR/conditions.json.tmp"
    mv "$STATE_DIR/conditions.json.tmp" "$STATE_DIR/conditions.json"
    ip link set dev "$HOST_DEV" mtu 1500
    in_ns ip link set dev "$NS_DEV" mtu 1500
    sleep 0.1
    ;;
mtu)
    ip link set dev "$HOST_DEV" mtu "$2"
    in_ns ip link set dev "$NS_DEV" mtu "$2"
    ;;
*)
    echo "usage: $0 start|stop|set <conditions>|clear|down|up|reset|mtu <bytes>" >&2
    exit 2
    ;;
esac
