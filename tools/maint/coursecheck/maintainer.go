package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"time"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// The maintainers' checks of the course itself, built on the grader: the
// ladder (ladder.go), the mutant catalogue (mutants.go) and the stress run
// (stress.go). Students never need them; make ladder, make mutants and make
// stress run them.

// maintainerConfig holds the flags of the maintainers' modes.
type maintainerConfig struct {
	ladder, mutants bool
	mutate          bool          // -mutate: mechanical mutants of the students' declarations
	mutateFor       time.Duration // -mutate: the run's hard time budget; 0 for no limit
	only            string        // -mutate: only the mutants whose keys start with one of these (comma-separated)
	rotate          bool          // -ladder: one chapter, chosen by the seed
	rungs           int           // -ladder: only this many rungs per chapter, chosen by the seed
	ladderBudget    time.Duration // -ladder: a chapter climbs its next rung only if it fits in this (0: no limit)
	rung            int           // -ladder: only the rung with this many exercises solved (make ladder RUNG=k)
	solutions       string        // the reference tree, relative to the root
	mutantsDir      string        // the catalogue, relative to the root
	forgeries       bool          // -forgeries: grade the forgery catalogue
	forgeriesDir    string        // its folder, relative to the root
	sample          int           // -mutants: grade only this many, chosen by seed
	seed            uint64        // -ladder -rotate/-rungs, -mutants -sample: 0 means one derived from today's date
	min             int           // -mutants: warn about exercises with fewer mutants
	repeat, busy    int           // stress: runs, and busy loops beside them
	spin            bool          // stress: this process is one of the busy loops
	mirror, check   bool          // -mirror: write chapters/ from solutions/ (-check: only compare)
}

func (m *maintainerConfig) register(fs *flag.FlagSet) {
	fs.BoolVar(&m.ladder, "ladder", false, "maintainers: for each chapter and k, solve exercises 1..k only (from -solutions) and require exactly those points")
	fs.BoolVar(&m.mutants, "mutants", false, "maintainers: grade every mutant of the catalogue; each must lose its exercise's points")
	fs.BoolVar(&m.mutate, "mutate", false, "maintainers: mutate every declaration a stub stands for (statement removal, operators, boundaries) and grade each mutant with its exercise's checks")
	fs.DurationVar(&m.mutateFor, "mutate-for", 0, "-mutate: stop after this long (0: no limit); the mutants not graded by then count as not run")
	fs.StringVar(&m.only, "keys", "", "-mutate: only the mutants whose keys start with one of these, comma-separated (re-grade survivors)")
	fs.BoolVar(&m.rotate, "rotate", false, "-ladder: climb only one of the chapters, chosen by -seed (for make test)")
	fs.IntVar(&m.rungs, "rungs", 0, "-ladder: climb only this many of each chapter's rungs between none and all solved, chosen by -seed (default: every rung)")
	fs.DurationVar(&m.ladderBudget, "ladder-budget", 0, "-ladder: after a chapter's first rung, climb the next only if the rungs so far and one more as long as their average fit in this (0: no limit; make test: a chapter's sample costs about the same whichever the seed draws)")
	fs.IntVar(&m.rung, "rung", 0, "-ladder: climb only the rung with exercises 1..k solved (k ≥ 1; make ladder CH=06 RUNG=7): the one rung that shows a stub which does the work of exercise k+1")
	fs.StringVar(&m.solutions, "solutions", "solutions", "maintainers: the reference tree, relative to the root")
	fs.StringVar(&m.mutantsDir, "mutants-dir", "tools/maint/mutants", "maintainers: the mutant catalogue, relative to the root")
	fs.BoolVar(&m.forgeries, "forgeries", false, "maintainers: grade every forgery of the catalogue on the starters (each must earn nothing) and every honest change on the solutions (each must keep every point)")
	fs.StringVar(&m.forgeriesDir, "forgeries-dir", "tools/maint/forgeries", "maintainers: the forgery catalogue, relative to the root")
	fs.IntVar(&m.sample, "sample", 0, "-mutants, -mutate: grade only this many mutants, chosen by -seed (default: all)")
	fs.Uint64Var(&m.seed, "seed", 0, "-ladder -rotate/-rungs, -mutants -sample: the seed of the choice, so that a run can be repeated (make test: from the commit; default: from today's date)")
	fs.IntVar(&m.min, "min", 4, "-mutants: warn about graded exercises with fewer mutants than this")
	fs.IntVar(&m.repeat, "repeat", 0, "maintainers: grade -solutions this many times (with -busy busy loops); every run must pass")
	fs.IntVar(&m.busy, "busy", 0, "-repeat: busy loops (child processes) spinning beside the runs")
	fs.BoolVar(&m.spin, spinFlag[1:], false, "-repeat: internal: be a busy loop")
	fs.BoolVar(&m.mirror, "mirror", false, "maintainers: write each chapter's given code and stub-free files from -solutions (make chapters)")
	fs.BoolVar(&m.check, "check", false, "-mirror: write nothing; exit 1 if a chapter is not what its solution makes of it")
}

// sampleSeed is the seed of the maintainers' samples (-rotate, -rungs,
// -sample): -seed, or one from today's date when it is 0.
func (m *maintainerConfig) sampleSeed() uint64 {
	if m.seed != 0 {
		return m.seed
	}
	return dateSeed(time.Now())
}

func (m *maintainerConfig) enabled() bool {
	return m.ladder || m.mutants || m.mutate || m.forgeries || m.mirror || m.repeat > 0
}

// runMaintainer runs the one maintainers' mode the flags ask for.
func runMaintainer(ctx context.Context, c config, chapters []rubric.Chapter, stdout, stderr io.Writer) int {
	m := c.maint
	modes := 0
	for _, on := range []bool{m.ladder, m.mutants, m.mutate, m.forgeries, m.mirror, m.repeat > 0} {
		if on {
			modes++
		}
	}
	var err error
	switch {
	case modes > 1:
		err = errors.New("-ladder, -mutants, -mutate, -forgeries, -mirror and -repeat are separate runs: pick one")
	case m.sample < 0 || m.min < 0 || m.busy < 0 || m.rungs < 0 || m.rung < 0 || m.ladderBudget < 0:
		err = errors.New("-sample, -min, -busy, -rungs, -rung and -ladder-budget must not be negative")
	case m.rung > 0 && (m.rungs > 0 || m.rotate):
		err = errors.New("-rung names one rung; -rungs and -rotate choose rungs by the seed: pick one")
	case m.ladder:
		return runLadder(ctx, c, chapters, stdout, stderr)
	case m.mutants:
		return runMutants(ctx, c, chapters, stdout, stderr)
	case m.mutate:
		return runMutate(ctx, c, chapters, stdout, stderr)
	case m.mirror:
		return runMirror(c, chapters, m.check, stdout, stderr)
	case m.forgeries:
		return runForgeries(ctx, c, chapters, stdout, stderr)
	default:
		return runStress(ctx, c, chapters, stdout, stderr)
	}
	fmt.Fprintln(stderr, "coursecheck:", err)
	return grade.ExitError
}

// An overlayFile is go build's -overlay file: {"Replace": {abs path: abs path
// of the content, or "" for a deleted file}}.
type overlayFile struct {
	Replace map[string]string
}

// readOverlay reads an -overlay file (as the grader does) into a map that
// the caller may extend; "" is an empty overlay.
func readOverlay(path string) (map[string]string, error) {
	replace, err := grade.ReadOverlay(path)
	if replace == nil && err == nil {
		replace = map[string]string{}
	}
	return replace, err
}

// writeOverlay writes base's entries and replace's as one overlay file in
// dir and returns its path. Both replacing the same file is an error: one
// would silently win.
func writeOverlay(dir string, base, replace map[string]string) (string, error) {
	merged := maps.Clone(base)
	for from, to := range replace {
		if _, dup := merged[from]; dup {
			return "", fmt.Errorf("the -overlay file already replaces %s", from)
		}
		merged[from] = to
	}
	raw, err := json.MarshalIndent(overlayFile{Replace: merged}, "", "\t")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "overlay-*.json")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(raw); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}

// writeTemp writes content to a new file in dir named like name (the go
// command wants the .go suffix on an overlay's content files too) and returns
// its path.
func writeTemp(dir, name, content string) (string, error) {
	f, err := os.CreateTemp(dir, "*-"+filepath.Base(name))
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}
