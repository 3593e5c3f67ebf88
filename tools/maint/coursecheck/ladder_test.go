package main

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// The ladder fixture: testdata/ladder/{chapters,solutions}/01, a starter and
// its solution. 1.1's solution needs a helper only it has, 1.2's imports
// that the stub lacks (and the stub's import must go), 1.3 has no code of its
// own, and 1.4's stub panics: the ladder must report it at every rung below 4.
const (
	ladderRubric    = "testdata/ladder/rubric.json"
	ladderChapters  = "tools/maint/coursecheck/testdata/ladder/chapters"
	ladderSolutions = "tools/maint/coursecheck/testdata/ladder/solutions"
)

func ladderFixtureChapter(t *testing.T) rubric.Chapter {
	t.Helper()
	f, err := os.Open(ladderRubric)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := rubric.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return r.Chapters[0]
}

func TestLadderPlanOfFixture(t *testing.T) {
	ch := ladderFixtureChapter(t)
	plan, err := planLadder(ch, filepath.Join(fixtureRoot, ladderChapters, "01"), filepath.Join(fixtureRoot, ladderSolutions, "01"))
	if err != nil {
		t.Fatalf("planLadder: %v", err)
	}
	if got, want := fmt.Sprint(plan.levels()), "[0 1 2 4]"; got != want {
		t.Errorf("levels %s, want %s (1.3 has no code of its own: k=3 builds what k=2 does)", got, want)
	}
	for k, want := range map[int]string{0: "[0 0 2 0]", 1: "[1 0 2 0]", 2: "[1 1 1 0]", 4: "[1 1 1 1]"} { // mustFail, mustPass, mayPass
		if got := fmt.Sprint(plan.expected(k)); got != want {
			t.Errorf("expected(%d) = %s, want %s", k, got, want)
		}
	}
	if len(plan.files) != 2 {
		t.Fatalf("plan has %d files, want 2 (lib.go and shout.go, which only the solution has)", len(plan.files))
	}
	lf, shout := plan.files[0], plan.files[1]
	for k, want := range map[int]string{1: "//go:build !plan9\n\npackage ladderfix\n", 2: "func shout(s string) string"} {
		if src, err := shout.source(k); err != nil || !strings.Contains(string(src), want) {
			t.Errorf("shout.go at k=%d = %q, %v; want it to hold %q", k, src, err, want)
		}
	}
	checks := []struct {
		k        int
		has, not []string
	}{
		{0, []string{`"errors"`, "return 0\n", "seen map"}, []string{"func twice", "strings"}},
		{1, []string{"return twice(n)", "func twice(n int) int", `"errors"`}, []string{"strings", "fmt"}},
		{2, []string{`"fmt"`, `"errors"`, "shout(name)"}, []string{"c.n++", "strings"}},
		{4, []string{"c.n++", "n int"}, []string{"seen map", "c.seen"}},
	}
	for _, c := range checks {
		src, err := lf.source(c.k)
		if err != nil {
			t.Fatalf("source(%d): %v", c.k, err)
		}
		for _, s := range c.has {
			if !bytes.Contains(src, []byte(s)) {
				t.Errorf("source(%d) lacks %q:\n%s", c.k, s, src)
			}
		}
		for _, s := range c.not {
			if bytes.Contains(src, []byte(s)) {
				t.Errorf("source(%d) has %q:\n%s", c.k, s, src)
			}
		}
	}
}

// TestLadderOfFixture climbs the fixture's ladder end to end: four rungs,
// the exact points at each, and 1.4's panic reported below rung 4.
func TestLadderOfFixture(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	code, stderr := gradeLadder(t, &stdout, "-ladder", "-rubric", ladderRubric, "-target", ladderChapters, "-solutions", ladderSolutions)
	if code != grade.ExitRequirement {
		t.Fatalf("exit status %d, want %d (1.4's stub panics); stderr:\n%s\nstdout:\n%s", code, grade.ExitRequirement, stderr, stdout.String())
	}
	rows := map[string]string{}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 5 && strings.Contains(f[2], "/35") {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	want := map[string]string{
		"0": "none 0/35 0/35", "1": "1.1 10/35 10/35", "2": "1.1–1.2 25/35 25/35", "4": "1.1–1.4 35/35 35/35",
	}
	for k, w := range want {
		row, ok := rows[k]
		switch {
		case !ok:
			t.Errorf("no rung k=%s in:\n%s", k, stdout.String())
		case !strings.HasPrefix(row, w):
			t.Errorf("rung k=%s: %q, want it to start %q", k, row, w)
		case k != "4" && !strings.Contains(row, "1.4: panic (want failed)"):
			t.Errorf("rung k=%s: %q does not report 1.4's panic", k, row)
		case k == "4" && strings.Contains(row, "want"):
			t.Errorf("rung k=4 has mismatches: %q", row)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("%d rungs, want %d:\n%s", len(rows), len(want), stdout.String())
	}
	if !strings.Contains(stdout.String(), "note: 1.3 has no stub of its own") {
		t.Errorf("the report does not note that 1.3 has no code of its own:\n%s", stdout.String())
	}
}

func gradeLadder(t *testing.T, stdout *bytes.Buffer, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := run(t.Context(), append([]string{"-root", fixtureRoot, "-q"}, args...), stdout, &stderr)
	return code, stderr.String()
}

// TestLadderPlansOfTheCourse plans every chapter's ladder without building
// it: every rung's files must parse, and the top rung must be the solution,
// declaration for declaration. (make ladder builds and grades the rungs.)
func TestLadderPlansOfTheCourse(t *testing.T) {
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range r.Chapters {
		t.Run(ch.ID, func(t *testing.T) {
			solDir := filepath.Join(fixtureRoot, "solutions", ch.ID)
			if _, err := os.Stat(solDir); err != nil {
				t.Skip("no solutions/ here (the student release): the ladder is the maintainers' check")
			}
			plan, err := planLadder(ch, filepath.Join(fixtureRoot, "chapters", ch.ID), solDir)
			if err != nil {
				t.Fatalf("planLadder: %v", err)
			}
			top := len(ch.Exercises)
			for _, lf := range plan.files {
				for _, k := range plan.levels() {
					src, err := lf.source(k)
					if err != nil {
						t.Fatalf("%s at k=%d: %v", lf.path, k, err)
					}
					if _, err := parser.ParseFile(token.NewFileSet(), "", src, 0); err != nil {
						t.Fatalf("%s at k=%d does not parse: %v", lf.path, k, err)
					}
				}
				src, _ := lf.source(top)
				checkSameCode(t, lf.path, src, filepath.Join(solDir, filepath.Base(lf.path)))
			}
		})
	}
}

// checkSameCode requires every declaration of the solution's file in src,
// with the same code.
func checkSameCode(t *testing.T, name string, src []byte, solFile string) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, got, err := readDecls(tmp)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := readDecls(solFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		i := slices.IndexFunc(got, func(g topDecl) bool { return g.key == w.key })
		switch {
		case w.isImport:
		case i < 0:
			t.Errorf("%s with every exercise solved lacks the solution's %s", name, w.key)
		case got[i].code != w.code:
			t.Errorf("%s with every exercise solved has another %s than the solution:\n%s\nwant:\n%s", name, w.key, got[i].code, w.code)
		}
	}
}

func TestFixImports(t *testing.T) {
	src := []byte("package p\n\nimport \"errors\"\n\n// F uses strings.\nfunc F() string { return strings.ToUpper(rand.Text()) }\n")
	got, err := fixImports(src, map[string]string{"errors": "", "strings": "", "crypto/rand": "", "math/rand/v2": "mrand", "embed": "_"})
	if err != nil {
		t.Fatal(err)
	}
	want := "package p\n\nimport (\n\t\"crypto/rand\"\n\t_ \"embed\"\n\t\"strings\"\n)\n\n// F uses strings.\nfunc F() string { return strings.ToUpper(rand.Text()) }\n"
	if string(got) != want {
		t.Errorf("fixImports =\n%s\nwant:\n%s", got, want)
	}
	for p, name := range map[string]string{"math/rand/v2": "rand", "net/http": "http", "serverlab/tools/given/lab": "lab"} {
		if got := importName(p); got != name {
			t.Errorf("importName(%q) = %q, want %q", p, got, name)
		}
	}
}

func TestSampleRungs(t *testing.T) {
	levels := []int{0, 1, 2, 3, 4, 7} // 7 exercises, 5 and 6 without code of their own
	for _, tt := range []struct {
		n, offset int
		want      string
	}{
		{2, 0, "[1 2]"}, {2, 3, "[1 4]"}, {1, 5, "[2]"}, {9, 1, "[1 2 3 4]"},
	} {
		if got := fmt.Sprint(sampleRungs(levels, 7, tt.n, tt.offset)); got != tt.want {
			t.Errorf("sampleRungs(%v, 7, %d, offset %d) = %s, want %s", levels, tt.n, tt.offset, got, tt.want)
		}
	}
}
