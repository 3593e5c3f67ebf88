#!/bin/sh
# sff-ch06.sh — SFF against FIFO: small (1 KiB) and large (8 MiB) files
# requested at the same time from a server with one worker, each class by its
# own loadgen (so each gets its own latency percentiles), FIFO and SFF
# alternately, ROUNDS times each.
#
#   sh tools/interop/sff-ch06.sh [small-rate] [large-rate] [seconds] [rounds]   (defaults: 400 30 8 2)
set -eu
small=${1:-400}
large=${2:-30}
secs=${3:-8}
rounds=${4:-2}
dir=$(mktemp -d)
trap 'kill $wpid 2>/dev/null; rm -rf $dir' EXIT
wpid=
go build -o $dir/wserver ./solutions/06/cmd/wserver
go build -o $dir/loadgen ./tools/loadgen
head -c 1024 /dev/urandom > $dir/small.bin
head -c 8388608 /dev/urandom > $dir/large.bin
for r in $(seq $rounds); do
	for policy in FIFO SFF; do
		$dir/wserver -d $dir -p 10000 -t 1 -b 1000 -s $policy 2>/dev/null &
		wpid=$!
		sleep 1
		echo "== round $r, -s $policy -t 1 -b 1000: /small.bin at $small/s and /large.bin at $large/s for ${secs}s"
		$dir/loadgen http -addr 127.0.0.1:10000 -uri /small.bin -rate $small -duration ${secs}s -clients 1000 -timeout 60s -quiet -label "policy=$policy,file=small" -csv $dir/sff.csv > $dir/small.txt &
		lpid=$!
		$dir/loadgen http -addr 127.0.0.1:10000 -uri /large.bin -rate $large -duration ${secs}s -clients 1000 -timeout 60s -quiet -label "policy=$policy,file=large" -csv $dir/sff.csv > $dir/large.txt
		wait $lpid
		echo "small:"; sed -n '2,4p' $dir/small.txt
		echo "large:"; sed -n '2,4p' $dir/large.txt
		kill $wpid; wait $wpid 2>/dev/null || true
	done
done
echo "== CSV"; cat $dir/sff.csv
