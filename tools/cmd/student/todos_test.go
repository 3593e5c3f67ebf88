package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every chapter's TODOs state contracts: what must be true once the stub
// is written (the protocol rule, the invariant, which lock protects what,
// what the check observes), never the statements to type, which are make
// hint's last level, the recipe.

// codeInProse is what Go code looks like inside a sentence: a call, a short
// variable declaration, a channel operation, a composite literal or block,
// a comparison or a boolean operator. (Not "go" or "return": prose has them.)
var codeInProse = regexp.MustCompile(`[A-Za-z_][\w.]*\(|:=|<-|[{}]|==|!=|&&|\|\|`)

// manPage is a manual page reference, write(2): prose, not a call.
var manPage = regexp.MustCompile(`\b[a-z_0-9]+\([1-8]\)`)

// TestTodosAreContracts keeps the chapters' TODOs free of code to type: each
// says what must be true when it is done and what checks it.
func TestTodosAreContracts(t *testing.T) {
	root, err := filepath.Abs(courseRoot)
	if err != nil {
		t.Fatal(err)
	}
	marker := regexp.MustCompile(`TODO\(ex [0-9]+\.[0-9]+\)`)
	dirs, err := filepath.Glob(filepath.Join(root, "chapters", "[0-9][0-9]"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no chapters under %s: %v", root, err)
	}
	for _, dir := range dirs {
		ch := filepath.Base(dir)
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range slices.Compact(slices.Sorted(slices.Values(marker.FindAllString(string(src), -1)))) {
				for _, td := range scanTodos(filepath.Base(f), src, []byte(m)) {
					seen++
					text := strings.Join(td.Text, " ")
					plain := manPage.ReplaceAllString(text, "a manual page")
					if loc := codeInProse.FindStringIndex(plain); loc != nil {
						t.Errorf("chapters/%s/%s: %s holds code to type (%q); say what must be true when it is done, and put the recipe in the rubric's last hint", ch, td.where(), m, plain[max(0, loc[0]-30):min(len(plain), loc[1]+30)])
					}
					if !strings.Contains(text, "Done when") {
						t.Errorf("chapters/%s/%s: %s does not start its contract with \"Done when\": %q", ch, td.where(), m, text)
					}
				}
			}
		}
		if seen == 0 {
			t.Errorf("chapters/%s has no TODO(ex …) at all", ch)
		}
	}
}
