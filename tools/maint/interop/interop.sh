#!/bin/sh
# interop.sh — `make interop`: drive chapter 06's reference server with the
# real HTTP clients the original could not survive (curl, wrk, httperf), and
# check that it is still serving afterwards. Never part of `make test`: the
# tools are optional, and each missing one is reported and skipped.
#
#   sh tools/maint/interop/interop.sh
set -u
dir=$(mktemp -d)
trap 'kill $wpid 2>/dev/null; rm -rf $dir' EXIT
wpid=
port=${PORT:-10099}
fail=0
go build -o $dir/wserver ./solutions/06/cmd/wserver || exit 1
mkdir -p $dir/www
go build -o $dir/www/spin.cgi ./tests/webtest/cgiprog/spin || exit 1
echo '<h1>interop</h1>' > $dir/www/index.html
head -c 1024 /dev/urandom > $dir/www/f1k.bin
$dir/wserver -d $dir/www -p $port -t 8 -b 64 2>$dir/log &
wpid=$!
sleep 1
base=http://127.0.0.1:$port

ok() { echo "ok    $*"; }
bad() { echo "FAIL  $*"; fail=1; }
missing() { echo "skip  $1 is not installed (Debian: apt-get install -y $1)"; }
alive() {
	if kill -0 $wpid 2>/dev/null && [ "$(curl -s -o /dev/null -w '%{http_code}' $base/ 2>/dev/null)" = 200 ]; then
		ok "server still serving after $1"
	else
		bad "server not serving after $1"
	fi
}

if command -v curl >/dev/null 2>&1; then
	[ "$(curl -s $base/)" = "<h1>interop</h1>" ] && ok "curl GET /" || bad "curl GET /"
	[ "$(curl -s -o /dev/null -w '%{http_code}' --path-as-is $base/../../../etc/hostname)" = 403 ] &&
		ok "curl /../../../etc/hostname is 403" || bad "curl /../../../etc/hostname is not 403"
	curl -s "$base/spin.cgi?0.1" | grep -q "I spun for" && ok "curl spin.cgi?0.1" || bad "curl spin.cgi?0.1"
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST $base/)" = 501 ] && ok "curl POST is 501" || bad "curl POST is not 501"
	alive curl
else
	missing curl
fi
if command -v wrk >/dev/null 2>&1; then
	out=$(wrk -t2 -c50 -d3s -H "Connection: close" $base/f1k.bin 2>&1)
	echo "$out" | grep -E "Requests/sec|Socket errors|Non-2xx" | sed 's/^/      wrk: /'
	echo "$out" | grep -q "Non-2xx" && bad "wrk saw non-2xx responses" || ok "wrk -H 'Connection: close' (the original died here)"
	alive wrk
else
	missing wrk
fi
if command -v httperf >/dev/null 2>&1; then
	out=$(httperf --server 127.0.0.1 --port $port --uri /f1k.bin --num-conns 2000 --rate 500 --timeout 5 2>&1)
	echo "$out" | grep -E "^Total|^Reply status|^Errors: total" | sed 's/^/      httperf: /'
	echo "$out" | grep -q "Errors: total 0 " && ok "httperf 2000 connections at 500/s" || bad "httperf reported errors"
	out=$(httperf --server 127.0.0.1 --port $port --uri '/spin.cgi?0.2' --num-conns 50 --rate 50 --timeout 10 2>&1)
	echo "$out" | grep -q "Reply status: 1xx=0 2xx=50 " && ok "httperf 50 spin.cgi at 50/s" || bad "httperf spin.cgi replies"
	alive httperf
else
	missing httperf
fi
# The course's CGI programs under the original server (issue: the OSTEP server
# starts them with an empty argument list, so a program that picks its part
# from argv[0] alone did not know what to be). PEERS is the folder of the
# originals, each fetched and built outside the repository (ostep: the
# concurrency-webserver folder of remzi-arpacidusseau/ostep-projects, make in
# src); skipped without it.
ostep=
for w in "${PEERS:-/nonexistent}/ostep/src/wserver" "${PEERS:-/nonexistent}/ostep/concurrency-webserver/src/wserver"; do
	[ -x "$w" ] && ostep=$w
done
if [ -n "$ostep" ]; then
	cp $dir/www/spin.cgi $dir/www/env.cgi
	oport=$((port + 1))
	(cd $dir/www && exec "$ostep" -d . -p $oport) 2>$dir/ostep.log &
	opid=$!
	sleep 1
	obase=http://127.0.0.1:$oport
	for c in "spin.cgi?0.1|I spun for 0.1" "env.cgi?a=1|QUERY_STRING=a=1"; do
		uri=${c%%|*} want=${c#*|}
		out=$(curl -s -i --max-time 5 "$obase/$uri" | tr -d '\r')
		if echo "$out" | grep -q '^Content-Length: ' && echo "$out" | grep -q "$want"; then
			ok "original wserver runs the course's $uri (Content-Length and body)"
		else
			bad "original wserver and the course's $uri: $(echo "$out" | head -3 | tr '\n' ' ')"
		fi
	done
	if command -v wrk >/dev/null 2>&1; then
		out=$(wrk -t1 -c4 -d2s "$obase/env.cgi?x" 2>&1)
		echo "$out" | grep -qE "Socket errors:.*read [1-9]" && bad "wrk: read errors on the course's env.cgi under the original" ||
			ok "wrk: no read errors on the course's env.cgi under the original"
	fi
	kill $opid 2>/dev/null; wait $opid 2>/dev/null
else
	echo "skip  the original OSTEP wserver (set PEERS to a folder holding ostep/src/wserver, built from the OSTEP concurrency-webserver)"
fi
exit $fail
