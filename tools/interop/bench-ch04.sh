#!/bin/sh
# bench-ch04.sh — chapter 04's lock-granularity experiment under the original's
# kind of load: stockbench (tools/interop/stockbench.c, one process per client)
# against the reference stock server with -lock stock and -lock tree, taking
# turns, then medians. Never part of `make test`; needs gcc.
#
#   sh tools/interop/bench-ch04.sh [rounds] [queries] [workers]   (defaults: 5 100000 16)
#
# Set LOADGEN=1 to run tools/loadgen's stock mode (goroutine clients) in the
# same rounds, for comparison.
set -eu
rounds=${1:-5}
queries=${2:-100000}
workers=${3:-16}
command -v gcc >/dev/null 2>&1 || { echo "bench-ch04: gcc is not installed"; exit 1; }
dir=$(mktemp -d)
trap 'kill $spid $tpid 2>/dev/null; rm -rf $dir' EXIT
spid= tpid=
gcc -O2 -o $dir/stockbench tools/interop/stockbench.c
go build -o $dir/stockserver ./solutions/04/cmd/stockserver
go build -o $dir/loadgen ./tools/loadgen
for lock in stock tree; do
	mkdir -p $dir/$lock
	for id in $(seq 1 10); do echo "$id 1000 ${id}00"; done > $dir/$lock/stock.txt
done
(cd $dir/stock && exec ../stockserver -file stock.txt -lock stock 9471 $workers 2>/dev/null) &
spid=$!
(cd $dir/tree && exec ../stockserver -file stock.txt -lock tree 9472 $workers 2>/dev/null) &
tpid=$!
sleep 1
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for clients in 16 64; do
	: > $dir/s.txt; : > $dir/t.txt; : > $dir/ls.txt; : > $dir/lt.txt
	for i in $(seq $rounds); do
		s=$($dir/stockbench 127.0.0.1 9471 $clients $queries | awk '{print int($3)}')
		t=$($dir/stockbench 127.0.0.1 9472 $clients $queries | awk '{print int($3)}')
		echo "$s" >> $dir/s.txt; echo "$t" >> $dir/t.txt
		line="round $i, $clients clients, stockbench: -lock stock $s, -lock tree $t queries/s"
		if [ "${LOADGEN:-0}" = 1 ]; then
			ls=$($dir/loadgen stock -addr 127.0.0.1:9471 -clients $clients -queries $queries -json | sed -n 's/.*"throughput_rps": *\([0-9]*\).*/\1/p')
			lt=$($dir/loadgen stock -addr 127.0.0.1:9472 -clients $clients -queries $queries -json | sed -n 's/.*"throughput_rps": *\([0-9]*\).*/\1/p')
			echo "$ls" >> $dir/ls.txt; echo "$lt" >> $dir/lt.txt
			line="$line; loadgen: $ls, $lt"
		fi
		echo "$line"
	done
	echo "$clients clients, $workers workers, stockbench: median -lock stock $(median < $dir/s.txt), -lock tree $(median < $dir/t.txt) queries/s"
	if [ "${LOADGEN:-0}" = 1 ]; then
		echo "$clients clients, $workers workers, loadgen: median -lock stock $(median < $dir/ls.txt), -lock tree $(median < $dir/lt.txt) queries/s"
	fi
done
