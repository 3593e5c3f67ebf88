package main

import (
	"bytes"
	"strings"
	"testing"

	"serverlab/tools/internal/grade"
)

// TestChaptersAreWhatTheirSolutionsMake fails when a chapter's given code or
// stub-free file is not its solution's: the fix goes into solutions/, then
// make chapters writes the chapter.
func TestChaptersAreWhatTheirSolutionsMake(t *testing.T) {
	chapters, err := grade.SelectChapters("", "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := config{Flags: grade.Flags{Root: fixtureRoot, Target: "chapters"}, maint: maintainerConfig{solutions: "solutions"}}
	if code := runMirror(c, chapters, true, &out, &out); code != 0 {
		t.Errorf("make chapters would change the chapters (exit %d):\n%s", code, out.String())
	}
}

const mirrorSolution = `// Package p is given.
package p

import (
	"errors"
	"strings"
)

// Given is given code.
func Given() string { return strings.ToUpper("x") }

// Solve is exercise 1.1.
func Solve() error {
	return helper()
}

func helper() error { return errors.New("solved") }

// Own is given code the solution changes.
func Own() int { return 2 }
`

const mirrorChapterFile = `// Package p is given.
package p

import (
	"fmt"
	"strings"
)

// Given is OLD given code.
func Given() string { return strings.ToLower("x") }

// Solve is exercise 1.1.
func Solve() error {
	// TODO(ex 1.1): solve it.
	return fmt.Errorf("not implemented")
}

// Own is given code the solution changes.
//
//mirror:keep (the solution's is its own)
func Own() int { return 1 }
`

func TestMirrorGo(t *testing.T) {
	got, problems, err := mirrorGo("p.go", []byte(mirrorChapterFile), []byte(mirrorSolution))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("problems: %q", problems)
	}
	s := string(got)
	for _, want := range []string{
		"strings.ToUpper", // given code comes from the solution
		"// TODO(ex 1.1): solve it.",
		`"fmt"`, // the stub's import is added
		"func Own() int { return 1 }",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the mirrored file lacks %q:\n%s", want, s)
		}
	}
	for _, unwanted := range []string{"ToLower", "func helper", `"errors"`, "return 2"} {
		if strings.Contains(s, unwanted) {
			t.Errorf("the mirrored file has %q:\n%s", unwanted, s)
		}
	}
}

func TestMirrorRefusesGivenCodeOnlyInTheChapter(t *testing.T) {
	chapter := mirrorChapterFile + "\n// Extra is given code the solution lacks.\nfunc Extra() {}\n"
	_, problems, err := mirrorGo("p.go", []byte(chapter), []byte(mirrorSolution))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "func Extra is only in the chapter") {
		t.Errorf("problems = %q, want one naming func Extra", problems)
	}
}

// TestMirrorOpen: an open-track starter takes every shared declaration from
// whichever file of the solution declares it, keeps its own (marked) ones and
// its header, and names a declaration that is in neither.
func TestMirrorOpen(t *testing.T) {
	sol := &packageDecls{
		text:    map[string]string{"type Config": "// Config is the solution's.\ntype Config struct {\n\tN int\n\tD time.Duration\n}"},
		where:   map[string]string{"type Config": "config.go"},
		twice:   map[string]bool{},
		sources: [][]byte{[]byte("package p\n\nimport \"time\"\n")},
	}
	open := `// Package p is the open track's.
package p

// Config is a stale hand copy.
type Config struct{ N int }

// Server is yours.
//
//mirror:keep the open track's own
type Server struct{ cfg Config }

// Stray is in no file of the solution.
type Stray int
`
	got, problems, err := mirrorOpen("server.go", []byte(open), sol)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	for _, want := range []string{"// Package p is the open track's.", "Config is the solution's", "D time.Duration", `"time"`, "type Server struct{ cfg Config }", "type Stray int"} {
		if !strings.Contains(s, want) {
			t.Errorf("the mirrored open starter lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "stale hand copy") {
		t.Errorf("the open starter kept its own copy of a shared declaration:\n%s", s)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "type Stray") {
		t.Errorf("problems = %q, want one naming type Stray", problems)
	}
}
