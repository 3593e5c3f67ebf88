package grade

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"serverlab/tools/internal/rubric"
)

// The course's own starters and solutions pass screening: an honest
// student's code looks like them.
func TestScreenPassesTheCourse(t *testing.T) {
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range r.Chapters {
		allowed := map[string]bool{}
		for _, a := range ch.Screen.Allow {
			allowed[a] = true
		}
		for _, tree := range []string{"chapters", "solutions"} {
			hits, err := screenChapter("../../..", "serverlab", tree+"/"+ch.ID, ch, allowed, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				t.Errorf("%s/%s: %s", tree, ch.ID, h)
			}
		}
	}
}

func TestScreenRulesMatchRubric(t *testing.T) {
	if !slices.Equal(screenRules, rubric.Rules) {
		t.Errorf("screen.go's rules %q and rubric.Rules %q differ", screenRules, rubric.Rules)
	}
}

// TestScreenRules screens one small file per rule.
func TestScreenRules(t *testing.T) {
	spec := rubric.Chapter{ID: "01", Exercises: []rubric.Exercise{{ID: "1.1"}, {ID: "1.2"}},
		Screen: rubric.Screen{Forbid: []rubric.Forbid{{Ref: "serverlab/tools/given/wire.ReadFrame", Exercises: []string{"1.1"}}}}}
	tests := []struct {
		name, file, src string
		rule, what      string
		exercises       []string
	}{
		{"init", "a.go", "package p\nfunc init() {}\n", ruleInit, "func init", nil},
		{"a method named init is fine", "a.go", "package p\ntype T int\nfunc (T) init() {}\n", "", "", nil},
		{"start-up call", "a.go", "package p\nimport \"os\"\nvar f, _ = os.Open(\"x\")\n", ruleStartup, "package-level initialiser calls os.Open", nil},
		{"start-up function literal called", "a.go", "package p\nvar x = func() int { return 1 }()\n", ruleStartup, "package-level initialiser calls a function call", nil},
		{"start-up constructors are fine", "a.go", "package p\nimport (\"errors\"; \"sync\"; \"bufio\")\nvar e = errors.New(\"x\")\nvar b = []byte(\"x\")\nvar p = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 1) }}\n", "", "", nil},
		{"fmt.Errorf wrapping sentinels is fine", "a.go", "package p\nimport (\"errors\"; \"fmt\"; \"io\")\nvar ErrA = errors.New(\"a\")\nvar ErrB = fmt.Errorf(\"b: %w %w %d\", ErrA, io.EOF, 3)\n", "", "", nil},
		{"fmt.Errorf formatting a value of the student's", "a.go", "package p\nimport \"fmt\"\ntype T int\nfunc (T) Error() string { return \"runs at start-up\" }\nvar t T\nvar ErrB = fmt.Errorf(\"b: %w\", t)\n", ruleStartup, "package-level initialiser calls fmt.Errorf", nil},
		{"os.Exit", "a.go", "package p\nimport \"os\"\nfunc f() { os.Exit(0) }\n", ruleExit, "os.Exit", nil},
		{"renamed os.Exit as a value", "a.go", "package p\nimport o \"os\"\nvar quit = o.Exit\n", ruleExit, "os.Exit", nil},
		{"syscall.Exit", "a.go", "package p\nimport \"syscall\"\nfunc f() { syscall.Exit(0) }\n", ruleExit, "syscall.Exit", nil},
		{"unix.Exit", "a.go", "package p\nimport \"golang.org/x/sys/unix\"\nfunc f() { unix.Exit(0) }\n", ruleExit, "unix.Exit", nil},
		{"linkname", "a.go", "package p\nimport _ \"unsafe\"\n//go:linkname x serverlab/tests/testkit.record\nvar x int\n", ruleLinkname, "//go:linkname", nil},
		{"unsafe", "a.go", "package p\nimport \"unsafe\"\nvar n = unsafe.Sizeof(0)\n", ruleUnsafe, `import "unsafe"`, nil},
		{"cgo", "a.go", "package p\nimport \"C\"\n", ruleCgo, `import "C"`, nil},
		{"assembly", "a_amd64.s", "TEXT ·f(SB),0,$0\n", ruleCgo, "non-Go source a_amd64.s", nil},
		{"suites", "a.go", "package p\nimport _ \"serverlab/tests/discoverytest\"\n", ruleImport, `import "serverlab/tests/discoverytest"`, nil},
		{"solutions", "a.go", "package p\nimport _ \"serverlab/solutions/01\"\n", ruleImport, `import "serverlab/solutions/01"`, nil},
		{"another chapter", "a.go", "package p\nimport _ \"serverlab/chapters/02\"\n", ruleImport, `import "serverlab/chapters/02"`, nil},
		{"a package outside the chapter", "a.go", "package p\nimport _ \"serverlab/docs/evil\"\n", ruleImport, `import "serverlab/docs/evil"`, nil},
		{"the grader", "a.go", "package p\nimport _ \"serverlab/tools/internal/rubric\"\n", ruleImport, `import "serverlab/tools/internal/rubric"`, nil},
		{"its own subpackage is fine", "a.go", "package p\nimport _ \"serverlab/chapters/01/internal/x\"\n", "", "", nil},
		{"given code is fine", "a.go", "package p\nimport _ \"serverlab/tools/given/lab\"\n", "", "", nil},
		{"os.Args", "a.go", "package p\nimport \"os\"\nvar n = len(os.Args)\n", ruleArgs, "os.Args", nil},
		{"test flags", "a.go", "package p\nimport \"flag\"\nfunc f() bool { return flag.Lookup(\"test.run\") != nil }\n", ruleArgs, "flag.Lookup", nil},
		{"package testing", "a.go", "package p\nimport \"testing\"\nvar b = testing.Testing\n", ruleArgs, `import "testing" in a non-test file`, nil},
		{"/proc", "a.go", "package p\nconst self = \"/proc/self/mem\"\n", ruleProc, `the path "/proc/self/mem"`, nil},
		{"forbidden given call", "a.go", "package p\nimport \"serverlab/tools/given/wire\"\nvar read = wire.ReadFrame\n", ruleForbid, "wire.ReadFrame", []string{"1.1"}},
		{"forbidden package dot-imported", "a.go", "package p\nimport . \"serverlab/tools/given/wire\"\n", ruleForbid, `dot import of "serverlab/tools/given/wire"`, []string{"1.1"}},
		{"test files are not the student's", "a_test.go", "package p\nfunc init() {}\n", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "chapters", "01")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			hits, err := screenChapter(root, "serverlab", "chapters/01", spec, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.rule == "" {
				for _, h := range hits {
					t.Errorf("unexpected hit: %s", h)
				}
				return
			}
			for _, h := range hits {
				if h.Rule == tt.rule && strings.HasPrefix(h.What, tt.what) && slices.Equal(h.Exercises, tt.exercises) {
					if h.File != "chapters/01/"+tt.file || h.Line == 0 {
						t.Errorf("hit at %s:%d, want chapters/01/%s and a line", h.File, h.Line, tt.file)
					}
					return
				}
			}
			t.Errorf("no %q hit %q (exercises %q); hits: %v", tt.rule, tt.what, tt.exercises, hits)
		})
	}
	// Allowed rules are not reported.
	root := t.TempDir()
	dir := filepath.Join(root, "chapters", "01")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "a.go"), []byte("package p\nimport \"unsafe\"\nvar n = unsafe.Sizeof(0)\n"), 0o644)
	if hits, _ := screenChapter(root, "serverlab", "chapters/01", spec, map[string]bool{ruleUnsafe: true}, nil); len(hits) != 0 {
		t.Errorf("-allow unsafe still reports %v", hits)
	}
}

// Screening reads what the build compiles: a file the overlay replaces is
// screened in its replacement, one it adds is screened, one it deletes is
// not.
func TestScreenSeesTheOverlay(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "chapters", "01")
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "a.go"), []byte("package p\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "c.go"), []byte("package p\nimport \"unsafe\"\nvar n = unsafe.Sizeof(0)\n"), 0o644)
	repl := filepath.Join(root, "a-replacement.go")
	_ = os.WriteFile(repl, []byte("package p\nimport \"os\"\nfunc f() { os.Exit(0) }\n"), 0o644)
	added := filepath.Join(root, "b-added.go")
	_ = os.WriteFile(added, []byte("package p\nfunc init() {}\n"), 0o644)
	replace := map[string]string{
		filepath.Join(dir, "a.go"): repl,
		filepath.Join(dir, "b.go"): added,
		filepath.Join(dir, "c.go"): "",
	}
	hits, err := screenChapter(root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, replace)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Rule+" "+h.File)
	}
	slices.Sort(got)
	if want := []string{"exit chapters/01/a.go", "init chapters/01/b.go"}; !slices.Equal(got, want) {
		t.Errorf("hits %q, want %q", got, want)
	}
}
