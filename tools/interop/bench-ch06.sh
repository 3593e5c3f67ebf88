#!/bin/sh
# bench-ch06.sh — chapter 06's performance goal: the course's web server
# against nginx on 1 KiB (and 100 KiB) files, one request per connection
# (wrk -H "Connection: close"), interleaved A B A B … in one run, medians.
#
#   sh tools/interop/bench-ch06.sh [rounds] [seconds]      (defaults: 7 rounds of 3 s)
#
# Needs nginx and wrk (Debian: apt-get install -y nginx wrk). Serves a
# temporary folder on 127.0.0.1:10080 (nginx) and :10000 (wserver). Set
# WSERVER_FLAGS to change the server's flags (default: -t 8 -b 64). With
# PIN=1, each server gets CPU 1 (nginx one worker, Go GOMAXPROCS=1) and wrk
# CPU 0 (one thread), so that the load generator does not compete with the
# server on a 2-core machine. NGINX_PORT and WSERVER_PORT change the ports.
# With CEILING=1, tools/bench/webceiling joins the 1 KiB rounds: the least a Go
# server can do, through package net (port WSERVER_PORT+10) and on raw
# descriptors (WSERVER_PORT+20) — the ceiling the course's server is under.
set -eu
nport=${NGINX_PORT:-10080}
wport=${WSERVER_PORT:-10000}
rounds=${1:-7}
secs=${2:-3}
for tool in nginx wrk go; do
	command -v $tool >/dev/null 2>&1 || { echo "bench-ch06: $tool is not installed (apt-get install -y nginx wrk)"; exit 1; }
done
dir=$(mktemp -d)
chmod 755 $dir # mktemp makes it 0700: nginx's workers (user nobody) would answer 403
pin_server= pin_wrk= threads=2 workers=auto
if [ "${PIN:-0}" = 1 ]; then
	pin_server="taskset -c 1" pin_wrk="taskset -c 0" threads=1 workers=1
fi
trap 'nginx -c $dir/nginx.conf -p $dir -s stop 2>/dev/null; kill $wpid $npid $rpid 2>/dev/null; rm -rf $dir' EXIT
mkdir -p $dir/www $dir/logs
head -c 1024 /dev/urandom > $dir/www/f1k.html
head -c 102400 /dev/urandom > $dir/www/f100k.bin
cat > $dir/nginx.conf <<CONF
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections 4096; }
http {
    access_log off; sendfile on; tcp_nopush on; keepalive_timeout 0;
    client_body_temp_path $dir/b; proxy_temp_path $dir/p; fastcgi_temp_path $dir/f; uwsgi_temp_path $dir/u; scgi_temp_path $dir/s;
    server { listen 127.0.0.1:$nport; root $dir/www; }
}
CONF
$pin_server nginx -c $dir/nginx.conf -p $dir
go build -o $dir/wserver ./solutions/06/cmd/wserver
$pin_server $dir/wserver -d $dir/www -p $wport ${WSERVER_FLAGS:--t 8 -b 64} 2>/dev/null &
wpid=$!
npid= rpid=
if [ "${CEILING:-0}" = 1 ]; then
	go build -o $dir/webceiling ./tools/bench/webceiling
	$pin_server $dir/webceiling -mode net -addr 127.0.0.1:$((wport + 10)) 2>/dev/null &
	npid=$!
	$pin_server $dir/webceiling -mode raw -addr 127.0.0.1:$((wport + 20)) -n 2 2>/dev/null &
	rpid=$!
fi
sleep 1
# rps prints wrk's requests per second, or fails if any reply was not a 2xx
# (wrk counts those as requests too: a 403 page is not the benchmark).
rps() { $pin_wrk wrk -t$threads -c50 -d${secs}s -H "Connection: close" "http://127.0.0.1:$1$2" |
	awk '/Non-2xx/ {bad=$NF} /Requests\/sec/ {r=int($2)} END {if (bad) {print "bench-ch06: " bad " non-2xx replies from port '$1'" > "/dev/stderr"; exit 1}; print r}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for file in /f1k.html /f100k.bin; do
	: > $dir/nginx.txt; : > $dir/go.txt; : > $dir/ratio.txt
	ceiling=
	[ "${CEILING:-0}" = 1 ] && [ $file = /f1k.html ] && ceiling=1
	: > $dir/net.txt; : > $dir/raw.txt
	for i in $(seq $rounds); do
		n=$(rps $nport $file); g=$(rps $wport $file)
		echo "$n" >> $dir/nginx.txt; echo "$g" >> $dir/go.txt
		echo "$g $n" | awk '{printf "%.3f\n", $1/$2}' >> $dir/ratio.txt
		line="round $i $file: nginx $n req/s, wserver $g req/s"
		if [ -n "$ceiling" ]; then
			c=$(rps $((wport + 10)) $file); r=$(rps $((wport + 20)) $file)
			echo "$c $n" | awk '{printf "%.3f\n", $1/$2}' >> $dir/net.txt
			echo "$r $n" | awk '{printf "%.3f\n", $1/$2}' >> $dir/raw.txt
			line="$line, webceiling net $c, raw $r"
		fi
		echo "$line"
	done
	echo "$file: median nginx $(median < $dir/nginx.txt) req/s, wserver $(median < $dir/go.txt) req/s, median ratio wserver/nginx $(median < $dir/ratio.txt)"
	if [ -n "$ceiling" ]; then
		echo "$file: median ratio to nginx of webceiling net $(median < $dir/net.txt), raw $(median < $dir/raw.txt)"
	fi
done
