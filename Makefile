# serverlab — the course's commands. `make help` lists them.

GO      ?= go
# make grade: what to grade and how to report it.
TARGET  ?= chapters
CH      ?=
FORMAT  ?= text
OUT     ?=
# make fuzz: how long each fuzz target runs.
FUZZTIME ?= 20s
# make watch: the chapter and (optional) exercise to re-run on every change.
EX      ?=

GRADE_FLAGS = -target $(TARGET) -format $(FORMAT) $(if $(CH),-ch $(CH)) $(if $(OUT),-o $(OUT))

.PHONY: help test vet unit grade status watch bench bench-ch05 fuzz interop student-release

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18

ifneq ($(wildcard solutions),)
test: vet unit ## prove the course: vet, every suite on the solutions (-race), the grader both ways
	$(GO) run ./tools/grade -q -target solutions -require all
	$(GO) run ./tools/grade -q -target chapters -require none
else
test:
	@echo "This checkout has no solutions/ (a student release). make test proves the course against its"
	@echo "reference solutions; here, use make grade to see your points."
endif

vet: ## go vet and gofmt on everything
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# The solutions' tests are the graded exercises: `make test` runs every one of
# them through the grader (under -race, each in its own process), so unit does
# not run them a second time.
unit: ## the tests of tests/ and tools/ under -race (the solutions' run through the grader)
	$(GO) test -race -count=1 ./tests/... ./tools/...

grade: ## grade chapters/ (CH=01 TARGET=solutions FORMAT=gradescope|classroom|junit|json OUT=file)
	$(GO) run ./tools/grade $(GRADE_FLAGS)

status: ## one table of where you stand (same as make grade)
	$(GO) run ./tools/grade -target $(TARGET) $(if $(CH),-ch $(CH))

watch: ## re-run one chapter's tests on every save (CH=01 [EX=1_2])
	@test -n "$(CH)" || { echo "usage: make watch CH=01 [EX=1_2]"; exit 2; }
	@last=""; while :; do \
		now=$$(find chapters/$(CH) -name '*.go' -exec stat -c '%Y %n' {} + | md5sum); \
		if [ "$$now" != "$$last" ]; then last="$$now"; clear; date; \
			$(GO) test -race -count=1 ./chapters/$(CH)/... $(if $(EX),-run 'Ex$(EX)_') 2>&1 | tail -40; fi; \
		sleep 1; done

bench: ## the course's benchmarks (short); experiments live in each chapter's README
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200ms ./tools/... ./solutions/...

fuzz: ## run every fuzz target for FUZZTIME each
	@for pkg in $$($(GO) list ./tools/... ./tests/... ./solutions/... 2>/dev/null); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; done

bench-ch05: ## chapter 05's C10K experiment: ch02 vs ch05 chat servers, 2 to 10,000 clients (about 5 min)
	$(GO) run ./tools/bench/c10k -out docs/bench-ch05

interop: ## chapter 06 against curl, wrk and httperf (optional tools; each missing one is reported)
	sh tools/interop/interop.sh

student-release: ## dist/serverlab-student.tar.gz: the course without solutions/
	@mkdir -p dist
	git archive --format=tar.gz --prefix=serverlab/ -o dist/serverlab-student.tar.gz HEAD \
		$$(git ls-tree --name-only HEAD | grep -v -e '^solutions$$' -e '^\.ci$$')
	@echo "wrote dist/serverlab-student.tar.gz (no solutions/, no .ci/)"
