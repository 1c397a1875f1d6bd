# nginx for the comparison scripts (process-bench.sh, memory-bench.sh), sourced by them: one
# worker, no access log, keep-alive connections that last the whole series, its files in a
# temporary folder. nginx comes from the Debian package (`apt-get install nginx-light`).
#
#     start_nginx DIR PORT [DIRECTIVE...]
#
# writes DIR/nginx.conf, which serves DIR/www on 127.0.0.1:PORT (each DIRECTIVE, such as
# "sendfile on;", goes into its http block), and starts nginx; stop_nginx DIR stops it.

start_nginx() {
    local dir=$1 port=$2 directive extra=""
    shift 2
    for directive in "$@"; do
        extra+="  $directive"$'\n'
    done
    mkdir -p "$dir/www" "$dir/logs"
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
${extra}  keepalive_requests 1000000;
  keepalive_timeout 120s;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  server { listen 127.0.0.1:$port; root $dir/www; }
}
CONF
    nginx -c "$dir/nginx.conf" -p "$dir"
}

stop_nginx() {
    nginx -c "$1/nginx.conf" -p "$1" -s stop 2>/dev/null || true
}
