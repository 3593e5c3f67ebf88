#!/usr/bin/env bash
# Gradescope autograder set-up for serverlab: runs once, as root, when
# Gradescope builds the autograder image. The autograder zip holds this
# file, run_autograder, a file "chapter" with the chapter this assignment
# grades (e.g. 03), and the course itself in serverlab/ (a student release:
# make student-release, unpacked). See docs/grading.md.
#
# Unlike run_autograder, set-up may fail loudly: Gradescope shows its log.
set -euo pipefail

AG=${AUTOGRADER_ROOT:-/autograder}
SRC=$AG/source
GO_VERSION=${SERVERLAB_GO_VERSION:-1.26.8}   # at least the go line of go.mod
STUDENT=${SERVERLAB_USER:-serverlab-student}

if [ "${SERVERLAB_SETUP_SKIP_INSTALL:-}" != 1 ]; then
	# gcc and the C library headers: the race detector (go test -race) needs cgo.
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		ca-certificates curl gcc libc6-dev util-linux
	arch=$(dpkg --print-architecture)   # amd64 or arm64, as Go names them
	curl -fsSL "https://go.dev/dl/go${GO_VERSION}.linux-${arch}.tar.gz" | tar -C /usr/local -xz
	# The unprivileged user the students' code runs as: no home, no shell,
	# no write access to the course, the results or the scripts.
	id -u "$STUDENT" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$STUDENT"
fi
export PATH=/usr/local/go/bin:$PATH
export GOCACHE=${GOCACHE:-$AG/cache/go-build} GOMODCACHE=${GOMODCACHE:-$AG/cache/mod}
# -trimpath stays when the caller's GOFLAGS has it, as the grader keeps it
# (make test sets it): builds in a fresh folder then share the cache's
# entries of the same packages anywhere else (tools/internal/grade, buildFlags).
case " ${GOFLAGS:-} " in *" -trimpath "*) trimpath=" -trimpath" ;; *) trimpath= ;; esac
export GOFLAGS="-buildvcs=false$trimpath" GOTOOLCHAIN=local

chapter=$(tr -d '[:space:]' <"$SRC/chapter")
case $chapter in [0-9][0-9]) ;; *) echo "setup.sh: $SRC/chapter must hold a chapter id such as 03, not '$chapter'" >&2; exit 1 ;; esac

cd "$SRC/serverlab"
go mod download
mkdir -p "$AG/bin"
go build -o "$AG/bin/serverlab-grade" ./tools/cmd/grade

# Warm the build cache where run_autograder builds: the go command's cache
# keys include the package's directory, so grade the untouched starter in
# the same place once (its score does not matter). That compiles the standard
# library and SQLite exactly as run_autograder's grader will, under -race for
# the student's code and without it for the judge (chapter 07: about 150 s of CPU on an
# empty cache: docs/grading.md, "The first build"), so that no submission
# waits for it.
work=${SERVERLAB_WORK:-$AG/work}/serverlab
rm -rf "$work" && mkdir -p "$work" && cp -a "$SRC/serverlab/." "$work/"
(cd "$work" && "$AG/bin/serverlab-grade" -q -ch "$chapter" -budget 0 >/dev/null) || true
rm -rf "$work"
