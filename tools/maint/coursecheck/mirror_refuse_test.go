package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// TestMirrorRefusesWholly: when make chapters refuses (here: the solution's
// given code now calls limit.go, which the chapter lacks), it writes
// nothing — not the given file it could have written before it found the
// problem. A chapter left half made does not compile (newcomer4: chapter 06
// after handler.go and errors.go were written and limit.go refused).
func TestMirrorRefusesWholly(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const oldGiven = "package p\n\n// Handle is given code.\nfunc Handle(uri string) int { return 200 }\n"
	write("chapters/01/a_handler.go", oldGiven)
	write("chapters/01/b_errors.go", "package p\n\n// Reason is given code.\nfunc Reason(code int) string { return \"\" }\n")
	write("solutions/01/a_handler.go", "package p\n\n// Handle is given code.\nfunc Handle(uri string) int {\n\tif uriTooLong(uri) {\n\t\treturn 414\n\t}\n\treturn 200\n}\n")
	write("solutions/01/b_errors.go", "package p\n\n// Reason is given code.\nfunc Reason(code int) string { return \"URI Too Long\" }\n")
	write("solutions/01/limit.go", "package p\n\n// uriTooLong is exercise 1.2.\nfunc uriTooLong(uri string) bool { return len(uri) > 2048 }\n")

	var out bytes.Buffer
	c := config{Flags: grade.Flags{Root: root, Target: "chapters"}, maint: maintainerConfig{solutions: "solutions"}}
	code := runMirror(c, []rubric.Chapter{{ID: "01"}}, false, &out, &out)
	if code == grade.ExitOK {
		t.Fatalf("make chapters accepted a chapter whose given code calls a file it lacks:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "limit.go") || !strings.Contains(out.String(), "wrote nothing") {
		t.Errorf("the refusal does not name limit.go and say it wrote nothing:\n%s", out.String())
	}
	for _, rel := range []string{"chapters/01/a_handler.go", "chapters/01/b_errors.go"} {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "uriTooLong") || strings.Contains(string(b), "URI Too Long") {
			t.Errorf("make chapters refused but wrote %s (a half-made chapter):\n%s", rel, b)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "chapters/01")); len(entries) != 2 {
		t.Errorf("chapters/01 holds %d entries after a refusal, want the 2 it had (a temporary file left behind?)", len(entries))
	}
}
