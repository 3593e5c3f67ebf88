#!/bin/sh
# loadgen-ch06.sh — the load generator's own goal: `loadgen http` must reach at
# least 0.8× wrk's throughput against the same server. wrk -t2 -c50 and
# loadgen http -clients 50 (-engine epoll, and -engine goroutine for
# comparison) take turns against nginx and wserver serving a 1 KiB file, one
# request per connection; each line also gives the client's own CPU time per
# request (/usr/bin/time user+system). Medians and median ratios at the end.
#
#   sh tools/interop/loadgen-ch06.sh [rounds] [seconds]      (defaults: 5 rounds of 3 s)
#
# Needs nginx, wrk and GNU time (Debian: apt-get install -y nginx wrk time).
# NGINX_PORT and WSERVER_PORT change the ports (defaults 10080 and 10000).
set -eu
nport=${NGINX_PORT:-10080}
wport=${WSERVER_PORT:-10000}
rounds=${1:-5}
secs=${2:-3}
for tool in nginx wrk go /usr/bin/time; do
	command -v $tool >/dev/null 2>&1 || { echo "loadgen-ch06: $tool is not installed (apt-get install -y nginx wrk time)"; exit 1; }
done
dir=$(mktemp -d)
chmod 755 $dir # mktemp makes it 0700: nginx's workers (user nobody) would answer 403
trap 'nginx -c $dir/nginx.conf -p $dir -s stop 2>/dev/null; kill $wpid 2>/dev/null; rm -rf $dir' EXIT
mkdir -p $dir/www $dir/logs
head -c 1024 /dev/urandom > $dir/www/f1k.html
cat > $dir/nginx.conf <<CONF
worker_processes auto;
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections 4096; }
http {
    access_log off; sendfile on; tcp_nopush on; keepalive_timeout 0;
    client_body_temp_path $dir/b; proxy_temp_path $dir/p; fastcgi_temp_path $dir/f; uwsgi_temp_path $dir/u; scgi_temp_path $dir/s;
    server { listen 127.0.0.1:$nport; root $dir/www; }
}
CONF
nginx -c $dir/nginx.conf -p $dir
go build -o $dir/wserver ./solutions/06/cmd/wserver
go build -o $dir/loadgen ./tools/loadgen
$dir/wserver -d $dir/www -p $wport -t 8 -b 64 2>/dev/null &
wpid=$!
sleep 1
# Each prints "req/s µs-of-client-CPU-per-request".
wrk_run() {
	/usr/bin/time -f "TIME %U %S" wrk -t2 -c50 -d${secs}s -H "Connection: close" "http://127.0.0.1:$1/f1k.html" 2>&1 |
		awk '/requests in/ {n=$1} /Requests\/sec/ {r=$2} /TIME/ {t=$2+$3} END {printf "%d %.1f\n", r, t*1e6/n}'
}
lg_run() {
	/usr/bin/time -f "TIME %U %S" $dir/loadgen http -engine $2 -addr 127.0.0.1:$1 -uri /f1k.html -clients 50 -duration ${secs}s -quiet 2>&1 |
		awk '/requests/ {n=$2} /throughput/ {r=$2} /TIME/ {t=$2+$3} END {printf "%d %.1f\n", r, t*1e6/n}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for port in $nport $wport; do
	: > $dir/wrk.txt; : > $dir/epoll.txt; : > $dir/gor.txt; : > $dir/ratio.txt; : > $dir/ratio2.txt
	for i in $(seq $rounds); do
		w=$(wrk_run $port); e=$(lg_run $port epoll); g=$(lg_run $port goroutine)
		echo "$w" >> $dir/wrk.txt; echo "$e" >> $dir/epoll.txt; echo "$g" >> $dir/gor.txt
		echo "$e $w" | awk '{printf "%.3f\n", $1/$3}' >> $dir/ratio.txt
		echo "$g $w" | awk '{printf "%.3f\n", $1/$3}' >> $dir/ratio2.txt
		echo "port $port round $i: wrk $w | loadgen epoll $e | loadgen goroutine $g   (req/s µs-CPU/req)"
	done
	echo "port $port: median req/s wrk $(cut -d' ' -f1 $dir/wrk.txt | median), epoll $(cut -d' ' -f1 $dir/epoll.txt | median), goroutine $(cut -d' ' -f1 $dir/gor.txt | median);" \
		"median µs CPU/req wrk $(cut -d' ' -f2 $dir/wrk.txt | median), epoll $(cut -d' ' -f2 $dir/epoll.txt | median), goroutine $(cut -d' ' -f2 $dir/gor.txt | median);" \
		"median ratio to wrk: epoll $(median < $dir/ratio.txt), goroutine $(median < $dir/ratio2.txt)"
done
