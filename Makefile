# serverlab — the course's commands. `make help` lists them.
#
# One Makefile for both trees: the maintainers' (with solutions/) and the
# student release (without). Targets that need the reference solutions exist
# only where solutions/ does, and `make help` lists only what works here.

GO      ?= go
export GO
# make grade: what to grade and how to report it.
TARGET  ?= chapters
CH      ?=
FORMAT  ?= text
OUT     ?=
# REQUIRE=all: exit 1 unless every exercise passed; none: unless every one failed cleanly.
REQUIRE ?=
# make hint / reset / watch: the exercise (3.4 or 3_4) and chapter (03);
# make reset CH=07 MODE=open: the chapter's open track (MODE=guided: back).
EX      ?=
MODE    ?=
# make fuzz: how long each fuzz target runs.
FUZZTIME ?= 20s

HAVE_SOLUTIONS := $(wildcard solutions)
# The solution-backed tests build only with this tag; which they are:
# docs/architecture.md (tools/maint/rooms holds the list there to the tree).
TAGS := $(if $(HAVE_SOLUTIONS),-tags solutions)
# Maintainers: COURSE=checkout grades with the checkout's course files (the
# default is git HEAD's, so uncommitted tests read as "not run");
# make ladder CH=06 RUNG=7: only the rung with 6.1…6.7 solved. Plain "=":
# only the command line sets them, never an environment variable that
# happens to be called COURSE; and only where solutions/ is (a student's
# make grade always grades with the course's own files).
COURSE  =
RUNG    =
COURSE_FLAG = $(if $(HAVE_SOLUTIONS),$(if $(COURSE),-course $(COURSE)))

GRADE_FLAGS = -target $(TARGET) -format $(FORMAT) $(if $(CH),-ch $(CH)) $(if $(OUT),-o $(OUT)) $(if $(REQUIRE),-require $(REQUIRE)) $(COURSE_FLAG)

.PHONY: help status next hint reset watch allowed grade vet vet-portable bench fuzz student-release

# `##` documents a target for everyone, `#M` one that only the maintainers'
# tree has.
help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18
ifneq ($(HAVE_SOLUTIONS),)
	@echo; echo "maintainers (this tree has solutions/):"
	@grep -E '^[a-z0-9-]+:.*#M ' $(MAKEFILE_LIST) | sed 's/:.*#M /\t/' | expand -t 18
endif

## ---- students ------------------------------------------------------------

status: ## where you stand: points per chapter, and the next exercise (re-runs only what changed)
	@$(GO) run ./tools/cmd/student status

next: ## the next unsolved exercise of the chapter you edited last: its lesson paragraph, its TODOs, its last failure (EX=7.4 or CH=07 to choose)
	@$(GO) run ./tools/cmd/student next $(or $(EX),$(CH))

hint: ## one more hint: the idea, the pitfall, the API, the recipe (EX=3.4; default: the exercise next names)
	@$(GO) run ./tools/cmd/student hint $(EX)

reset: ## restore an exercise's stubs, backing up yours first (EX=3.4); CH=07 MODE=open|guided switches a chapter's track
	@$(GO) run ./tools/cmd/student reset $(if $(MODE),-ch "$(CH)" -mode "$(MODE)",$(EX))

# Ctrl-C is how a watch ends, and it ends quietly: the student command exits 0
# on it. It runs built, not under go run, which exits 1 whenever it was
# interrupted ("make: *** [watch] Error 1"); the shell's trap covers a terminal's
# Ctrl-C, but a shell started with SIGINT ignored (from a script, a tool) cannot
# trap it (tools/cmd/student, TestMakeWatchEndsQuietlyOnInterrupt).
watch: ## re-run a chapter's tests on every save (CH=03 [EX=3_4])
	@dir=$$(mktemp -d "$${TMPDIR:-/tmp}/serverlab-watch.XXXXXX") && trap 'rm -rf "$$dir"; exit 0' INT && \
	$(GO) build -o "$$dir/student" ./tools/cmd/student && \
	{ "$$dir/student" watch -ch "$(CH)" $(if $(EX),-ex $(EX)); s=$$?; rm -rf "$$dir"; exit $$s; }

allowed: ## what a chapter's code may call beyond its own and the ordinary standard library: make grade refuses the rest (CH=05)
	@$(GO) run ./tools/cmd/student allowed "$(CH)"

grade: ## the official points table (CH=01 TARGET=solutions FORMAT=gradescope|classroom|junit|json OUT=file REQUIRE=all|none)
	@$(GO) run ./tools/cmd/grade $(GRADE_FLAGS); rc=$$?; \
	if [ -n "$(OUT)" ] && [ $$rc -le 1 ] && [ -f "$(OUT)" ]; then echo "make grade: wrote $(OUT) ($(FORMAT))"; fi; exit $$rc

vet: ## go vet and gofmt on everything
	$(GO) vet $(TAGS) ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Chapter 05 is Linux-only (epoll): its files carry //go:build linux, so it
# vets here as the package that explains why it cannot run.
vet-portable: ## go vet as macOS and Windows see the course
	GOOS=darwin $(GO) vet $(TAGS) ./...
	GOOS=windows $(GO) vet $(TAGS) ./...

# In the student release the chapters' benchmarks are yours: CH=04 runs them
# on your server (they need its exercises solved).
bench: ## the course's benchmarks, short (CH=04: also your chapter's); experiments live in each lesson
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./tools/... \
		$(if $(HAVE_SOLUTIONS),./solutions/...) $(if $(CH),./chapters/$(CH)/...)

fuzz: ## run every fuzz target (tools/, tests/, chapters/, solutions/ if here) for FUZZTIME each
	@$(GO) run ./tools/cmd/student fuzz -time $(FUZZTIME)

student-release: ## dist/serverlab-student.tar.gz: the course without solutions/ (from git or from a plain folder)
	@$(GO) run ./tools/cmd/student release -o dist/serverlab-student.tar.gz

ifneq ($(HAVE_SOLUTIONS),)
## ---- maintainers (only where solutions/ exists) ---------------------------

.PHONY: test unit chapters release-check forgeries bench-ch03 bench-ch04 bench-ch05 bench-ch06 bench-chat bench-chatcore bench-chatscale interop soak mutants mutation ladder stress crash crash-chatscale

# The ladder and the mutants are sampled here (one chapter's ladder, two of its
# rungs and six mutants, all drawn from SEED; the second rung only if it fits in
# -ladder-budget beside the first, so that chapter 08, whose first rung takes
# about 90 s, costs no more than 01's two), so that every part of the course
# is exercised over a week of commits within make test's five minutes; `make
# ladder` and `make mutants` run all of them. SEED is the commit's (the first 15
# hex digits of HEAD, in decimal): a failure re-runs as it was with
# make test SEED=<the seed it printed>, on any day.
# Computed once per make (:=), so that a commit made during the run cannot change it.
#
# make stress's short form: one exercise of the solutions graded beside 16 busy
# loops (8 per core on CI's 2 cores), so that a time limit a busy machine breaks
# shows up in every commit's CI, not only in make stress. 3.4 is the exercise
# whose watchdog a busy machine tripped first (issue 23). Under 16 loops the
# grader gets about a ninth of the CPU, so even this one exercise costs about
# 30 s on 2 cores, more beside other work (docs/grading.md, "A busy machine").
ifeq ($(origin SEED),undefined)
SEED := $(shell h=$$(git rev-parse --verify -q HEAD 2>/dev/null | cut -c1-15); if [ -n "$$h" ]; then printf '%d' "0x$$h"; else date -u +%Y%m%d; fi)
endif
# The maintainers' targets build with -trimpath. Without it the build cache
# keys each package by its folder, so every clean clone, the unpacked release
# and each course copy that the grader's and catalogues' tests make compiled
# every package again; with it, identical packages share one entry wherever
# they lie (the grader passes the flag on to its builds). Students' builds
# keep the default, the one their own go test shares.
test test-graded test-tools test-samples unit release-check ladder mutants mutation forgeries stress: export GOFLAGS := $(strip $(filter-out -trimpath,$(GOFLAGS)) -trimpath)
test: #M prove the course: vet, every suite on the solutions (-race), one beside 16 busy loops, the grader both ways, samples of the ladder and mutants (SEED=), the student release
	@echo "make test: seed $(SEED) (the ladder's and the mutants' samples; re-run them with make test SEED=$(SEED))"
	@$(MAKE) --no-print-directory -j3 -Oline SEED=$(SEED) test-graded test-tools test-samples
	$(GO) run ./tools/maint/coursecheck -q -budget 0 -target solutions -ex 1.5,5.6 -repeat 1 -busy 16
	@echo "make test: passed with seed $(SEED)"

# make test's three chains, side by side, about equally long. The grader's
# chain mostly waits (deadlines, one exercise's processes at a time: about
# 0.6 of a core), the tools' tests use one core, the samples about half of
# one, so three fill the machine's two cores; the grader scales its waits to
# the load it sees as each exercise starts. The student release runs after
# the samples: measured at 946f5a7 (clean clone, quiet machine), the grade
# took 278 s, unit 266 s and the samples 177 s, so the release's 78 s fits
# there and not after the grade. The busy-loop check runs alone
# after them, since its 16 loops would slow the others. Each alone: make
# test-graded, make test-tools, make test-samples.
.PHONY: test-graded test-tools test-samples
# Each step of the chains says what it cost (bash's time: wall, then the
# CPU of the step and its children), so a slow make test names its step.
test-graded test-tools test-samples unit release-check: SHELL := /bin/bash
test-graded test-tools test-samples unit release-check: export TIMEFORMAT := ↳ %Rs wall, %Us user + %Ss sys CPU
# The exercise run as a student runs it is drawn among those with the
# default time limit: 8.1 and 8.5, whose rubric gives them more, took up
# to 131 s under go test and made the graded chain the longest.
test-graded: #M make test's first chain: the solutions graded, one exercise as a student runs it, the forgeries' sample
	time $(GO) run ./tools/cmd/grade -q -budget 0 -j 3 -target solutions -require all
	time $(GO) run ./tools/maint/coursecheck -q -budget 0 -forgeries -sample 3 -seed $(SEED)
	@ch=$$(printf '%02d' $$(( $(SEED) % $(words $(wildcard solutions/0*)) + 1 ))); \
	long=$$(grep -o '"test": "TestEx[^"]*", "timeout"' tools/internal/rubric/rubric.json | cut -d'"' -f4); \
	tests=$$(grep -ho '^func TestEx[0-9A-Za-z_]*' solutions/$$ch/*_test.go | sed 's/^func //' | sort -u | grep -vxF "$$long"); \
	ex=$$(echo "$$tests" | sed -n "$$(( $(SEED) / 8 % $$(echo "$$tests" | wc -l) + 1 ))p"); \
	echo "make test: $$ex of chapter $$ch as a student runs it (go test -race, no grader)"; \
	time $(GO) test -race -count=1 -run "^$$ex\$$" ./solutions/$$ch/

test-tools: #M make test's second chain: vet, the tools' and suites' own tests, vet as macOS and Windows see the course
	time $(MAKE) --no-print-directory vet
	@$(MAKE) --no-print-directory unit
	time $(MAKE) --no-print-directory vet-portable

# The mechanical mutants are not sampled here: most of a chapter's have never
# been graded (tools/maint/mutants/REPORT.md), so a survivor drawn by the
# seed is news for make mutation, not a regression of this commit, and a
# report nobody acts on is not a test. Their machinery's tests run in unit.
test-samples: #M make test's third chain: the ladder's and the catalogue mutants' samples, the student release
	time $(GO) run ./tools/maint/coursecheck -q -budget 0 -j 3 -ladder -rotate -rungs 2 -ladder-budget 100s -seed $(SEED)
	time $(GO) run ./tools/maint/coursecheck -q -budget 0 -mutants -sample 6 -seed $(SEED)
	@$(MAKE) --no-print-directory release-check

# The solutions' tests are the graded exercises: `make test` runs every one of
# them through the grader (under -race, each in its own process), so unit does
# not run them a second time. -tags solutions adds the solution-backed tests
# (docs/architecture.md names them).
unit: #M the tests of tests/ and tools/ under -race (the solutions' run through the grader)
	time $(GO) test $(TAGS) -race -count=1 ./tests/... ./tools/...

# What CI runs on the student release: build it, unpack it in a temporary
# folder and run there what a student runs (tools/maint/releasecheck).
release-check: #M build the student release, unpack it elsewhere, run its vet, grade and student commands
	time $(GO) run ./tools/maint/releasecheck

# Chapter 03's job server against ThreadForge, driven by the original's own
# load_test with PEERS (without it: ch03 alone, driven by loadgen jobs).
bench-ch03: #M ch03 job server vs ThreadForge (PEERS=): 4 workloads x 10/50 clients, its load_test, into docs/bench-ch03 (about 3 min)
	$(GO) run ./tools/cmd/bench jobs -out docs/bench-ch03 $(if $(PEERS),-peers $(PEERS))

# Chapter 04's stock servers on the experiment runner: -lock stock/tree, one P or
# one per core, ch05's event loop; with PEERS, the originals (compiled from their
# sources) and their own multiclient_benchmark as the client.
bench-ch04: #M stock servers: ch04 (locks, GOMAXPROCS) vs ch05 (+ the originals with PEERS=), 16/64 clients, 2 stock files, into docs/bench-ch04 (about 4 min)
	$(GO) run ./tools/cmd/bench stock -out docs/bench-ch04 $(if $(PEERS),-peers $(PEERS))

bench-ch05: #M chapter 05's C10K experiment: ch02 vs ch05 chat servers, 2 to 10,000 clients (about 5 min)
	$(GO) run ./tools/cmd/bench c10k -out docs/bench-ch05

# The chat system's monitoring suite on the experiment runner (tools/cmd/bench):
# with PEERS, the original threaded and select() servers run alternately too.
bench-chat: #M chat servers ch02 vs ch05 (+ the originals with PEERS=): load and stress test, 5 plots in docs/bench-chat (about 3 min)
	$(GO) run ./tools/cmd/bench chat -out docs/bench-chat $(if $(PEERS),-peers $(PEERS))

# Chapter 06 on the experiment runner: static files (1 KiB, 100 KiB; FIFO and SFF) against the
# package-net ceiling, the ceiling plus the file system, nginx (if installed) and, with PEERS, the
# OSTEP original; then FIFO vs SFF completion order behind spin.cgi.
bench-ch06: #M chapter 06: static files vs the net ceiling and nginx, FIFO vs SFF order; tables and plots in docs/bench-ch06 (about 4 min)
	$(GO) run ./tools/cmd/bench web -out docs/bench-ch06 $(if $(PEERS),-peers $(PEERS))

# make interop: where the originals are built (see docs/interop.md); empty: only Debian's curl, wrk, httperf.
PEERS ?=
interop: #M two-way interop with the originals and a byte-level diff (PEERS=<folder>, docs/interop.md); without PEERS: curl, wrk, httperf on ch06
	$(GO) run ./tools/maint/interop/peers -diff $(if $(PEERS),-peers $(PEERS))

forgeries: #M every way to forge a grade in tools/maint/forgeries must earn nothing; honest work must keep every point (CH=01)
	$(GO) run ./tools/maint/coursecheck -q -budget 0 -forgeries $(if $(CH),-ch $(CH))

mutation: #M mechanical mutants of every declaration a stub stands for, graded by its exercise (CH=04 [EX=4.3] [COURSE=checkout]; tools/maint/mutants/REPORT.md)
	$(GO) run ./tools/maint/coursecheck -q -budget 0 -mutate $(if $(CH),-ch $(CH)) $(if $(EX),-ex $(EX)) $(COURSE_FLAG)

mutants: #M every plausible wrong solution in tools/maint/mutants must lose its exercise (CH=03 [EX=3.8] [COURSE=checkout])
	$(GO) run ./tools/maint/coursecheck -q -budget 0 -mutants -min 4 $(if $(CH),-ch $(CH)) $(if $(EX),-ex $(EX)) $(COURSE_FLAG)

# Given code lives in solutions/; a chapter holds only its stubs and its own
# files (tools/maint/coursecheck/mirror.go). Edit solutions/, then run this;
# tools/maint/coursecheck's test fails while a chapter is not what it makes.
chapters: #M write the chapters' given code and stub-free files from solutions/ (CH=07), then the stubs' list tests/testkit derives from them
	$(GO) run ./tools/maint/coursecheck -mirror $(if $(CH),-ch $(CH))
	$(GO) test $(TAGS) -count=1 -run TestStarterStubsAreCurrent ./tests/testkit/ -update-stubs

ladder: #M with exercises 1..k solved, exactly those score, every other one "failed" (CH=03 [RUNG=k] [COURSE=checkout])
	$(GO) run ./tools/maint/coursecheck -q -budget 0 -ladder $(if $(CH),-ch $(CH)) $(if $(RUNG),-rung $(RUNG)) $(COURSE_FLAG)

# make stress: N whole grades of the solutions, J exercises at once beside J busy loops.
N ?= 20
J ?= 4
stress: #M the solutions' grade N times, J exercises at once beside J busy loops (N=20 J=4)
	$(GO) run ./tools/maint/coursecheck -q -budget 0 -target solutions -repeat $(N) -j $(J) -busy $(J)

# make bench-chatcore: RUNS whole ladders of the original's load test, each on a fresh server and database.
RUNS ?= 3
bench-chatcore: #M chapter 07's experiment: the original's load test, 5 to 450 clients, against solutions/07 with its default hash (RUNS=3, about 4 min); table and plots in docs/chatcore-bench/
	$(GO) run ./tools/cmd/bench chatcore -runs $(RUNS) -out docs/chatcore-bench

bench-chatscale: #M chapter 08's experiment: chapter 07's load, 100 to 450 clients, on 1, 2 and 3 servers of one NATS cluster, 3 rounds (about 8 min); tables and plots in docs/bench-ch08
	$(GO) run ./tools/cmd/bench chatscale -nodes 1,2,3 -steps 100,300,450 -rounds 3 -out docs/bench-ch08

crash-chatscale: #M chapter 08: 300 writers in 30 channels on 3 servers of one NATS cluster, kill -9 of the stream's leader halfway; acknowledged lost 0, every delivery exactly once in order (about 40 s)
	$(GO) run ./tools/cmd/bench chatscale -kill -writers 300 -members 10 -interval 1s -duration 20s

crash: #M chapter 07: kill -9 the server after each acknowledged message, 100 times; nothing acknowledged may be lost
	$(GO) test -tags crash -count=1 -run Kill9 ./tests/chatcoretest

# make soak: how long each server is under hostile load.
SOAKTIME ?= 30s
soak: #M every reference server under hostile load, each as its own process (about 4 min; Linux)
	$(GO) run ./tools/maint/soak -duration $(SOAKTIME) -md docs/soak.md

else
test unit:
	@echo "make $@ proves the course against its reference solutions, which the student release"
	@echo "does not have. Here: make status (where you stand), make grade (the official points)."
endif
