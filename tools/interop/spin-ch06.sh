#!/bin/sh
# spin-ch06.sh — the seed's spin.cgi experiment: N connections at rate R asking
# for spin.cgi?1, against wserver -t 50 and -t 10 (-b 1000), measured with the
# course's loadgen (and httperf when it is installed). Prints each run's
# duration next to the ideal one.
#
#   sh tools/interop/spin-ch06.sh [conns] [rate]        (defaults: 200 100)
set -eu
conns=${1:-200}
rate=${2:-100}
dir=$(mktemp -d)
trap 'kill $wpid 2>/dev/null; rm -rf $dir' EXIT
wpid=
go build -o $dir/wserver ./solutions/06/cmd/wserver
go build -o $dir/loadgen ./tools/loadgen
go build -o $dir/spin.cgi ./tests/webtest/cgiprog/spin
for t in 50 10; do
	$dir/wserver -d $dir -p 10000 -t $t -b 1000 2>/dev/null &
	wpid=$!
	sleep 1
	# Ideal: arrivals every 1/rate s; each request takes 1 s on one of t workers.
	ideal=$(awk -v n=$conns -v r=$rate -v t=$t 'BEGIN {
		for (i = 0; i < t; i++) free[i] = 0
		for (i = 0; i < n; i++) { a = i / r; w = i % t; s = (free[w] > a) ? free[w] : a; free[w] = s + 1 }
		m = 0; for (i = 0; i < t; i++) if (free[i] > m) m = free[i]; printf "%.2f", m }')
	echo "== -t $t -b 1000: $conns connections at $rate/s to /spin.cgi?1 — ideal duration ${ideal}s"
	$dir/loadgen http -addr 127.0.0.1:10000 -uri '/spin.cgi?1' -rate $rate -num-conns $conns -timeout 120s -quiet
	if command -v httperf >/dev/null 2>&1; then
		httperf --server 127.0.0.1 --port 10000 --uri '/spin.cgi?1' --num-conns $conns --rate $rate --timeout 120 2>&1 |
			grep -E '^Total|^Connection time \[ms\]: min|^Reply status|^Errors: total'
	else
		echo "(httperf is not installed: apt-get install -y httperf)"
	fi
	kill $wpid; wait $wpid 2>/dev/null || true
done
