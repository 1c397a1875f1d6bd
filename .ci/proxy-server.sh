#!/usr/bin/env bash
# Private tinyproxy instances on loopback for the proxy tests.
#
#   eval "$(bash .ci/proxy-server.sh start)"   # starts them, prints the `export` lines below
#   bash .ci/proxy-server.sh stop              # stops them (only the ones this script started)
#
# `start` installs Debian's tinyproxy when it is missing (apt-get, through sudo unless root),
# then runs two instances in the foreground (`-d`), in the background, each on a free port of
# 127.0.0.1 with its own configuration, log and pid file in $MOYA_PROXY_DIR (default
# .build/ci-proxy):
#
#   MOYA_PROXY_URL=http://127.0.0.1:PORT                   no authentication
#   MOYA_AUTH_PROXY_URL=http://moya:SECRET@127.0.0.1:PORT  `BasicAuth moya SECRET` (407 without)
#
# Neither has a `ConnectPort` line, so CONNECT is allowed to every port (tinyproxy limits CONNECT
# only when at least one `ConnectPort` line is present), and both proxy plain-http requests
# (absolute form) to loopback targets. SECRET is random for each start.
#
# Only the `export` lines go to standard output; everything else goes to standard error.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE_DIR="${MOYA_PROXY_DIR:-.build/ci-proxy}"
INSTANCES=(plain auth)

log() { echo "proxy-server: $*" >&2; }

install_tinyproxy() {
    command -v tinyproxy >/dev/null 2>&1 && return 0
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        sudo=(sudo)
    fi
    log "installing tinyproxy"
    "${sudo[@]}" apt-get update -qq >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tinyproxy >&2
    command -v tinyproxy >/dev/null 2>&1 || {
        log "tinyproxy is still missing after apt-get install"
        exit 1
    }
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Whether the instance on port $1 answers HTTP (any status line will do).
answers() {
    python3 - "$1" <<'EOF' 2>/dev/null
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1) as s:
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    sys.exit(0 if s.recv(64).startswith(b"HTTP/") else 1)
EOF
}

# Stops the instance named $1 if its pid file names a running tinyproxy.
stop_instance() {
    local pid_file="$STATE_DIR/$1.pid" pid
    [ -f "$pid_file" ] || return 0
    pid="$(cat "$pid_file")"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q tinyproxy "/proc/$pid/cmdline" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            kill -9 "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$pid_file"
}

# Starts the instance named $1 on port $2; extra configuration lines follow as $3.
start_instance() {
    local name="$1" port="$2" extra="${3:-}"
    local dir
    dir="$(cd "$STATE_DIR" && pwd)"
    local conf="$dir/$name.conf" log_file="$dir/$name.log" pid_file="$dir/$name.pid"
    # No User/Group: it keeps the identity it was started with. No ConnectPort: CONNECT to any
    # port. DefaultErrorFile and StatFile are left out: tinyproxy then builds its error pages
    # itself. The Via header stays on (`Via: 1.1 tinyproxy (tinyproxy/1.11.1)`).
    cat >"$conf" <<EOF
Port $port
Listen 127.0.0.1
Timeout 120
LogFile "$log_file"
LogLevel Info
PidFile "$dir/$name.tinyproxy.pid"
MaxClients 100
Allow 127.0.0.1
ViaProxyName "tinyproxy"
$extra
EOF
    : >"$log_file"
    # Standard output and error go to the log: `eval "$(... start)"` would otherwise wait for
    # tinyproxy to close them.
    tinyproxy -d -c "$conf" </dev/null >>"$log_file" 2>&1 &
    local pid=$!
    echo "$pid" >"$pid_file"
    for _ in $(seq 1 50); do
        if answers "$port"; then
            log "$name tinyproxy (pid $pid) on 127.0.0.1:$port, log $log_file"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            cat "$log_file" >&2
            log "$name tinyproxy did not start"
            exit 1
        fi
        sleep 0.1
    done
    cat "$log_file" >&2
    log "$name tinyproxy did not answer on 127.0.0.1:$port"
    exit 1
}

start() {
    install_tinyproxy
    mkdir -p "$STATE_DIR"
    for name in "${INSTANCES[@]}"; do
        stop_instance "$name"
    done
    local plain_port auth_port secret
    plain_port="$(free_port)"
    start_instance plain "$plain_port"
    auth_port="$(free_port)"
    secret="$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
    start_instance auth "$auth_port" "BasicAuth moya $secret"
    echo "export MOYA_PROXY_URL=http://127.0.0.1:$plain_port"
    echo "export MOYA_AUTH_PROXY_URL=http://moya:$secret@127.0.0.1:$auth_port"
}

stop() {
    [ -d "$STATE_DIR" ] || return 0
    for name in "${INSTANCES[@]}"; do
        stop_instance "$name"
    done
    log "stopped"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
