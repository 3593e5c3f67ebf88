package rooms

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGuideNamesRealChecks holds CONTRIBUTING.md's "what catches a
// forgotten step" to the tree: every test it names is declared in a test
// file of the module, and every make command it gives is a target of the
// Makefile with variables the Makefile reads. A check the guide names that
// does not exist (or a knob make does not have) catches nothing.
func TestGuideNamesRealChecks(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	funcTest := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range funcTest.FindAllStringSubmatch(string(b), -1) {
			declared[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\bTest[A-Z]\w*`).FindAllString(string(guide), -1) {
		if !declared[m] && !regexp.MustCompile(`^TestEx\d`).MatchString(m) { // TestEx3_8_…: the example's wiring
			t.Errorf("CONTRIBUTING.md names %s, which no test file of the module declares: the check it promises does not exist", m)
		}
	}
	targets, vars := map[string]bool{}, map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][\w-]*):`).FindAllStringSubmatch(string(makefile), -1) {
		targets[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z][A-Z0-9_]*)\s*[?:]?=`).FindAllStringSubmatch(string(makefile), -1) {
		vars[m[1]] = true
	}
	for _, m := range regexp.MustCompile("`make ([a-z][\\w-]*)((?: [A-Z][A-Z0-9_]*=[^ `|)]*)*)").FindAllStringSubmatch(string(guide), -1) {
		if !targets[m[1]] && !anyTarget(targets, m[1]) {
			t.Errorf("CONTRIBUTING.md: %q: the Makefile has no target %s", m[0], m[1])
		}
		for _, kv := range strings.Fields(m[2]) {
			if name, _, _ := strings.Cut(kv, "="); !vars[name] {
				t.Errorf("CONTRIBUTING.md: %q: the Makefile reads no variable %s (make would ignore it)", m[0], name)
			}
		}
	}
}

// anyTarget says whether a target written for every chapter (bench-chNN)
// is a target for some chapter.
func anyTarget(targets map[string]bool, name string) bool {
	if !strings.Contains(name, "NN") {
		return false
	}
	re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(name), "NN", `\d\d`) + "$")
	for tg := range targets {
		if re.MatchString(tg) {
			return true
		}
	}
	return false
}
