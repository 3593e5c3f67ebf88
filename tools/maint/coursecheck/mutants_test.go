package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/grade"
)

// The fixture catalogue, testdata/ladder/mutants/01, against
// testdata/ladder/solutions/01: one mutant the suite kills, one it cannot
// (it changes nothing), one that does not compile, one whose patch is stale
// and one for an exercise the rubric does not have.
const ladderMutants = "tools/maint/coursecheck/testdata/ladder/mutants"

func TestMutantsOfFixture(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	code, stderr := gradeLadder(t, &stdout, "-mutants", "-rubric", ladderRubric, "-solutions", ladderSolutions, "-mutants-dir", ladderMutants)
	out := stdout.String()
	if code != grade.ExitRequirement {
		t.Fatalf("exit status %d, want %d (a mutant survives, three are invalid); stderr:\n%s\nstdout:\n%s", code, grade.ExitRequirement, stderr, out)
	}
	want := map[string]string{ // name → verdict and cause
		"triple":     "killed failed",
		"harmless":   "SURVIVED passed",
		"no-compile": "invalid build error",
		"stale":      "invalid stale patch",
		"unknown":    "invalid no such exercise",
	}
	for name, w := range want {
		row := regexp.MustCompile(`(?m)^  01\s+\S+\s+` + name + `\s+(.*)$`).FindStringSubmatch(out)
		if row == nil {
			t.Errorf("no row for mutant %s in:\n%s", name, out)
			continue
		}
		if got := strings.Join(strings.Fields(row[1]), " "); !strings.HasPrefix(got, w) {
			t.Errorf("mutant %s: %q, want it to start %q", name, got, w)
		}
	}
	for _, s := range []string{
		"mutants: 5 in " + ladderMutants,
		"solutions/01/lib.go:10:18: too many arguments", // the compiler's message, naming the solution's file
		"the patch is stale",
		"strengthen TestEx1_1_Double's checks",
		"chapter 01 1/5 20%",
		"1.1 1/4 25%",
		"warning: 3 exercise(s) have fewer than 4 mutants: 1.2 (0), 1.3 (0), 1.4 (0)",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), s) {
			t.Errorf("the report lacks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(stderr, "4 mutant(s) survived or are invalid") {
		t.Errorf("stderr lacks the count of bad mutants:\n%s", stderr)
	}

	// -ex 1.1 -sample 1: one mutant of 1.1, the same for the same seed.
	var again bytes.Buffer
	gradeLadder(t, &again, "-mutants", "-rubric", ladderRubric, "-solutions", ladderSolutions, "-mutants-dir", ladderMutants,
		"-ex", "1.1", "-sample", "1", "-seed", "3", "-min", "0")
	if s := again.String(); !strings.Contains(s, "mutants: 4 in "+ladderMutants+", a sample of 1 (-seed 3)") || strings.Contains(s, "warning") {
		t.Errorf("-ex 1.1 -sample 1 -seed 3 -min 0 reports:\n%s", s)
	}
}

func TestSampleMutants(t *testing.T) {
	var all []mutant
	for i := range 20 {
		all = append(all, mutant{chapter: "03", exercise: "3.2", name: fmt.Sprintf("m%02d", i)})
	}
	names := func(ms []mutant) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.name)
		}
		return strings.Join(s, ",")
	}
	a, b := sampleMutants(all, 5, 42), sampleMutants(all, 5, 42)
	if names(a) != names(b) || len(a) != 5 {
		t.Errorf("the same seed picks %s, then %s", names(a), names(b))
	}
	if c := sampleMutants(all, 5, 43); names(c) == names(a) {
		t.Errorf("seeds 42 and 43 pick the same %s", names(a))
	}
	if got := sampleMutants(all, 0, 1); len(got) != 20 {
		t.Errorf("-sample 0 keeps %d mutants, want all 20", len(got))
	}
	if got := dateSeed(time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)); got != 20261201 {
		t.Errorf("dateSeed = %d, want 20261201", got)
	}
}

func TestCompareIDs(t *testing.T) {
	if compareIDs("5.2", "5.10") >= 0 || compareIDs("5.10", "5.9") <= 0 || compareIDs("3.1", "3.1") != 0 {
		t.Error("exercise ids do not sort by number: want 5.2 < 5.9 < 5.10")
	}
}

// TestMutantCatalogueApplies checks every mutant of the course's catalogue
// without building it: its file is where it belongs, it starts with its why
// line and it applies to the current solution. (make mutants grades them.)
func TestMutantCatalogueApplies(t *testing.T) {
	all, err := findMutants(fixtureRoot, "tools/maint/mutants")
	if err != nil {
		t.Fatal(err)
	}
	env := mutantEnv{root: mustAbs(t, fixtureRoot), solutions: "solutions", tmp: t.TempDir()}
	for _, m := range all {
		if m.err != nil {
			t.Errorf("%s: %v", m.file, m.err)
			continue
		}
		if _, err := env.apply(m); err != nil {
			t.Errorf("%s: %v", m.file, err)
		}
	}
	t.Logf("%d mutants in tools/maint/mutants", len(all))
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestForgeryCatalogueApplies is TestMutantCatalogueApplies for the
// forgeries: every one applies to the tree it is written against (the
// starters; honest work and solved/: the solutions). A stub comment changed by the
// mirror made one stale, and only the sample that drew it said so.
func TestForgeryCatalogueApplies(t *testing.T) {
	all, err := findForgeries(fixtureRoot, "tools/maint/forgeries")
	if err != nil {
		t.Fatal(err)
	}
	root := mustAbs(t, fixtureRoot)
	for _, f := range all {
		if f.err != nil {
			t.Errorf("%s: %v", f.file, f.err)
			continue
		}
		tree := "chapters"
		if f.honest || f.solved {
			tree = "solutions"
		}
		env := mutantEnv{root: root, solutions: tree, tmp: t.TempDir()}
		if _, err := env.apply(f.mutant); err != nil {
			t.Errorf("%s: %v (remake it against %s/%s)", f.file, err, tree, f.chapter)
		}
	}
	t.Logf("%d forgeries in tools/maint/forgeries", len(all))
}
