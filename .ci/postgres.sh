#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the MoyaPostgres tests.
#
#   eval "$(bash .ci/postgres.sh start)"   # sets MOYA_POSTGRES_URL=postgres://postgres@127.0.0.1:PORT/moya
#   bash .ci/postgres.sh stop               # stops the cluster and removes its folder
#
# Installs nothing: it uses the newest /usr/lib/postgresql/*/bin (Debian's `postgresql` package).
# The cluster lives in $MOYA_POSTGRES_DIR (default: $TMPDIR/moya-postgres-ci), trusts every
# connection from 127.0.0.1 and from nowhere else, listens on a free port, and runs with fsync
# off: its data is worth nothing. `start` on a running cluster prints its line again; `stop` on
# none does nothing. Only the export line goes to stdout; the rest goes to stderr.
set -euo pipefail

dir="${MOYA_POSTGRES_DIR:-${TMPDIR:-/tmp}/moya-postgres-ci}"

log() { echo "postgres.sh: $*" >&2; }

find_bin() {
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
        log "no PostgreSQL binaries in /usr/lib/postgresql/*/bin (install Debian's postgresql package)"
        exit 1
    fi
    echo "$bin"
}

# Runs a PostgreSQL binary as the owner of the cluster: initdb and postgres refuse to run as root.
as_owner() {
    if [[ $(id -u) == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

port_is_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

print_export() {
    echo "export MOYA_POSTGRES_URL=postgres://postgres@127.0.0.1:$(cat "$dir/port")/moya"
}

is_running() {
    [[ -f "$dir/port" && -d "$dir/data" ]] && as_owner "$1/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

start() {
    local bin port attempt
    bin=$(find_bin)
    if is_running "$bin"; then
        print_export
        return
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    if [[ $(id -u) == 0 ]]; then
        chown postgres: "$dir"
    fi
    chmod 700 "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log" >&2
        exit 1
    }
    as_owner mkdir -p "$dir/socket"
    # Trust on 127.0.0.1 only: no Unix socket line, no other address.
    as_owner sh -c "echo 'host all all 127.0.0.1/32 trust' > '$dir/data/pg_hba.conf'"
    as_owner sh -c "cat >> '$dir/data/postgresql.conf'" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/socket'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF
    for attempt in 1 2 3 4 5 6 7 8; do
        port=$((20000 + RANDOM % 12768)) # below the ephemeral range (32768 and up)
        port_is_free "$port" || continue
        if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "-p $port" -w -t 30 start >/dev/null 2>&1; then
            echo "$port" >"$dir/port"
            "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres moya >&2
            print_export
            return
        fi
        log "could not start on port $port (attempt $attempt)"
    done
    cat "$dir/server.log" >&2 || true
    exit 1
}

stop() {
    local bin
    [[ -d "$dir" ]] || return 0
    bin=$(find_bin)
    if [[ -d "$dir/data" ]]; then
        as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
