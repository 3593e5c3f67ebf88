#!/bin/sh
# build.sh — build the originals the course re-creates, in a scratch folder
# OUTSIDE this repository ($PEERS). It never copies their code here: it only
# runs their own build commands where their sources already are.
#
#   sh tools/interop/peers/build.sh /path/to/peers
#
# Expected layout (docs/interop.md says how to fetch each one):
#   $PEERS/threadforge                                github.com/A-makarim/multithreading
#   $PEERS/chat                                       github.com/TussharKrishna07/Assignment-02
#   $PEERS/sg-syssw/concurrent_stockserver            github.com/sg20180546/System-Software
#   $PEERS/ostep/concurrency-webserver                github.com/remzi-arpacidusseau/ostep-projects
# A missing folder is reported and skipped. JOBS (default 1) is the parallelism
# of the C++ builds: keep it low on a shared machine.
set -u
peers=${1:-${PEERS:-}}
if [ -z "$peers" ]; then
	echo "usage: sh tools/interop/peers/build.sh <peers-folder>   (or PEERS=<folder>)" >&2
	exit 2
fi
jobs=${JOBS:-1}
fail=0
step() { echo "== $*"; }
skip() { echo "skip  $1: $2 not found (see docs/interop.md)"; }
run() { echo "+ $*"; "$@" || { echo "FAIL  $*"; fail=1; return 1; }; }

tf=$peers/threadforge
if [ -f "$tf/CMakeLists.txt" ]; then
	step "ThreadForge (chapter 03)"
	run cmake -S "$tf" -B "$tf/build" -DCMAKE_BUILD_TYPE=Release &&
		run cmake --build "$tf/build" -j"$jobs" --target threadforge_server load_test threadforge_client
else
	skip ThreadForge "$tf/CMakeLists.txt"
fi

chat=$peers/chat
if [ -f "$chat/chat_server_threaded.cpp" ]; then
	step "chat system (chapters 01, 02, 05)"
	# The repository ships prebuilt binaries: move them aside so that what runs
	# is built from the sources on this machine.
	mkdir -p "$chat/prebuilt"
	for b in discovery_server chat_server chat_server_select chat_client chat_server_threaded; do
		[ -f "$chat/$b" ] && [ ! -f "$chat/prebuilt/$b" ] && mv "$chat/$b" "$chat/prebuilt/$b"
	done
	(cd "$chat" && run make -j"$jobs" discovery_server chat_server chat_server_select chat_client) || fail=1
else
	skip "chat system" "$chat/chat_server_threaded.cpp"
fi

stock=$peers/sg-syssw/concurrent_stockserver
if [ -d "$stock/event_driven" ]; then
	step "stock servers (chapters 04, 05)"
	# The originals' own Makefiles compile without optimisation, and they must:
	# thread_based waits for readers with a busy loop on a plain int
	# (`while(writer_n);`), which -O2 turns into a loop that never ends.
	# -fcommon: their headers define globals, which GCC 10+ rejects by default.
	(cd "$stock/event_driven" && run sh -c 'gcc -fcommon -o stockserver *.c') || fail=1
	(cd "$stock/thread_based" && run sh -c 'gcc -fcommon -o stockserver *.c -lpthread') || fail=1
	(cd "$stock/client" && run make) || fail=1
else
	skip "stock servers" "$stock/event_driven"
fi

ostep=$peers/ostep/concurrency-webserver/src
if [ -f "$ostep/wserver.c" ]; then
	step "OSTEP web server (chapter 06)"
	(cd "$ostep" && run make wserver wclient spin.cgi) || fail=1
else
	skip "OSTEP web server" "$ostep/wserver.c"
fi

echo "skip  chatcore (chapter 07): not built by this script, and not part of the interop check (docs/interop.md)"
exit $fail
