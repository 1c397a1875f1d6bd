#!/usr/bin/env bash
# Runs ProcessBench: each client in a process of its own against nginx on loopback, the clients
# alternating, and prints each client's median CPU time per request, requests per second and
# peak RSS, with its ratio to raw AsyncHTTPClient's. nginx comes from the Debian package
# (`apt-get install nginx-light`); the script starts and stops its own instance.
#
#     Benchmarks/Comparisons/process-bench.sh [runs] [requests] [concurrency]
set -euo pipefail
runs=${1:-5}
requests=${2:-20000}
concurrency=${3:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
# nginx's worker runs as an unprivileged user: it must be able to read the page.
chmod 755 "$work"
trap 'nginx -c "$work/nginx.conf" -p "$work" -s stop 2>/dev/null || true; rm -rf "$work"' EXIT

mkdir -p "$work/www" "$work/logs"
head -c 128 /dev/zero | tr '\0' 'a' > "$work/www/index.html"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  client_body_temp_path $work/body;
  proxy_temp_path $work/proxy;
  fastcgi_temp_path $work/fastcgi;
  uwsgi_temp_path $work/uwsgi;
  scgi_temp_path $work/scgi;
  server { listen 127.0.0.1:8089; root $work/www; }
}
CONF
nginx -c "$work/nginx.conf" -p "$work"

# Extra flags for `swift build` (a mirror configuration, say) come from SWIFT_BUILD_FLAGS.
(cd "$here" && swift build -c release --product ProcessBench ${SWIFT_BUILD_FLAGS:-} >/dev/null)
bench="$here/.build/release/ProcessBench"
clients="ahc ahc-like-moya moya-callbacks moya-async"
for run in $(seq "$runs"); do
    for client in $clients; do
        PROCESS_BENCH_URL=http://127.0.0.1:8089 "$bench" "$client" "$requests" "$concurrency"
    done
done | tee "$work/results.txt"

python3 - "$work/results.txt" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    fields = line.split()
    values = dict(zip(fields[1::2], fields[2::2]))
    rows[fields[0]].append((float(values["cpu_us_per_req"]), float(values["req/s"]), int(values["max_rss_kib"])))
base = {k: statistics.median(x[i] for x in rows["ahc"]) for i, k in enumerate(("cpu", "rate", "rss"))}
print(f"\n{'client':16} {'CPU µs/req':>10} {'vs ahc':>7} {'req/s':>7} {'vs ahc':>7} {'RSS KiB':>8} {'vs ahc':>7}")
for client, values in rows.items():
    cpu, rate, rss = (statistics.median(x[i] for x in values) for i in range(3))
    print(f"{client:16} {cpu:10.1f} {cpu / base['cpu']:6.2f}x {rate:7.0f} {rate / base['rate']:6.2f}x {rss:8.0f} {rss / base['rss']:6.2f}x")
PY
