package grade

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// maxBuildLines is how much of the compiler's complaint a build error keeps:
// the first errors are the ones to fix first.
const maxBuildLines = 10

// buildChapter compiles a chapter's test binary, once, with the race
// detector, as `go test -c -race -o binary ./dir` run in the module root. It
// returns a build failure (a message for the student) or an error (the
// grader could not go on, e.g. it was interrupted).
//
// flags are the course files' -overlay and -modfile. The build ignores any
// go.work (GOWORK=off): the module is the course's go.mod, nothing else.
func buildChapter(ctx context.Context, root, dir, binary string, flags []string) (failure string, err error) {
	return goTestC(ctx, root, dir, binary, append([]string{"-race"}, flags...))
}

// buildJudge compiles a chapter's judge: its wiring built with the tag
// "judge" and without any of the chapter's other files (the overlay flags
// leave them out), so that the binary holds none of the student's code. It
// needs no race detector: no code of the student's runs in it.
func buildJudge(ctx context.Context, root, dir, binary string, flags []string) (failure string, err error) {
	return goTestC(ctx, root, dir, binary, append([]string{"-tags", "judge"}, flags...))
}

// buildEnv is the go command's environment for a build of the student's
// code: no go.work, no go env file (a student's code that ran as the same
// user could have written one, to change the next build), no vendor folder,
// the installed toolchain, and none of the caller's GOFLAGS but -trimpath.
func buildEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOENV=off", "GOFLAGS="+buildFlags(os.Getenv("GOFLAGS")), "GOTOOLCHAIN=local")
}

// buildFlags is the GOFLAGS of the grader's builds: -mod=mod, and -trimpath
// when the caller's GOFLAGS has it. make test sets it: a build without it is
// cached under its folder's path, so each clean clone and each course copy
// the maintainers' tests grade (mutants, forgeries, the release) compiled
// every package again; with it, identical packages share one cache entry
// wherever they lie. Students' builds keep the default, which their own
// go test shares.
func buildFlags(callers string) string {
	if slices.Contains(strings.Fields(callers), "-trimpath") {
		return "-mod=mod -trimpath"
	}
	return "-mod=mod"
}

func goTestC(ctx context.Context, root, dir, binary string, flags []string) (failure string, err error) {
	info, statErr := os.Stat(filepath.Join(root, filepath.FromSlash(dir)))
	if statErr != nil || !info.IsDir() {
		return fmt.Sprintf("%s does not exist: the rubric lists a chapter that is not in this checkout", dir), nil
	}
	args := append([]string{"test", "-c", "-o", binary}, flags...)
	cmd := exec.CommandContext(ctx, "go", append(args, "./"+dir)...)
	cmd.Dir = root
	cmd.Env = buildEnv()
	out, runErr := outputTracked(cmd, true)
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if runErr != nil {
		var exitErr *exec.ExitError
		if !errors.As(runErr, &exitErr) {
			return "", fmt.Errorf("run go test -c: %w", runErr)
		}
		return FirstLines(out, maxBuildLines), nil
	}
	if _, err := os.Stat(binary); err != nil {
		return fmt.Sprintf("%s has no test files (*_test.go): there is nothing to run", dir), nil
	}
	return "", nil
}

// firstLines returns the first n non-empty lines of out, noting what it left.
func FirstLines(out []byte, n int) string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			lines = append(lines, sc.Text())
		}
	}
	if len(lines) > n {
		lines = append(lines[:n], moreLines(len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// checkCgo makes sure the race detector can work: it needs cgo, and cgo a C
// compiler. Without them every chapter would fail to build with a message
// about the toolchain, not about the student's code; the grader says what to
// install instead. It returns "" when all is well.
func checkCgo(ctx context.Context, root string) string {
	cmd := exec.CommandContext(ctx, "go", "env", "CGO_ENABLED", "CC")
	cmd.Dir = root
	out, err := outputTracked(cmd, false)
	if err != nil {
		return "the grader could not run `go env`: is Go installed and on PATH? " + err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		lines = append(lines, "", "")
	}
	enabled, cc := strings.TrimSpace(lines[0]), strings.Fields(lines[1])
	install := "install a C compiler (Debian/Ubuntu: sudo apt-get install gcc; Fedora: sudo dnf install gcc; " +
		"macOS: xcode-select --install; Windows: gcc from https://www.msys2.org or https://jmeubank.github.io/tdm-gcc/, on PATH)"
	if enabled != "1" {
		msg := "not graded: the race detector (go test -race) needs cgo, and cgo is off (go env CGO_ENABLED is " + strconv.Quote(enabled) + ")"
		if len(cc) == 0 {
			return msg + ": " + install
		}
		if _, err := exec.LookPath(cc[0]); err != nil {
			return msg + ": " + install + ", then run again"
		}
		return msg + ": run `go env -w CGO_ENABLED=1` (and unset CGO_ENABLED in your shell), then run again"
	}
	if len(cc) == 0 {
		return "not graded: the race detector needs a C compiler and `go env CC` names none: " + install
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		return fmt.Sprintf("not graded: the race detector needs a C compiler and %q (go env CC) is not on PATH: %s", cc[0], install)
	}
	return ""
}

// position is where a test function is declared.
type position struct {
	file string // relative to the module root, slash-separated
	line int
}

var testDecl = regexp.MustCompile(`^func (Test\w+)\(`)

// findTests maps the test functions declared in dir/*_test.go, as the build
// saw them (the checkout's files and the overlay's), to where they are, so
// that reports can point at them. It is best effort: a file it cannot read
// just goes without positions.
func findTests(root, dir string, ov overlay) map[string]position {
	found := map[string]position{}
	abs := filepath.Join(root, filepath.FromSlash(dir))
	files, _ := filepath.Glob(filepath.Join(abs, "*_test.go"))
	for f := range ov.Replace {
		if filepath.Dir(f) == abs && strings.HasSuffix(f, "_test.go") && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	for _, f := range files {
		read := f
		if r, ok := ov.Replace[f]; ok { // the course's copy is what was built
			if r == "" {
				continue
			}
			read = r
		}
		src, err := readTreeFile(read)
		if err != nil {
			continue
		}
		rel := dir + "/" + filepath.Base(f)
		for i, l := range strings.Split(string(src), "\n") {
			if m := testDecl.FindStringSubmatch(l); m != nil {
				found[m[1]] = position{file: rel, line: i + 1}
			}
		}
	}
	return found
}

// modulePath reads the module path from root/go.mod: the grader runs in a
// module root, and the chapters' import paths start with it.
//
// modfile, if set, is the go.mod to read instead (the course's copy).
func modulePath(root, modfile string) (string, error) {
	if modfile == "" {
		modfile = filepath.Join(root, "go.mod")
	}
	src, err := readTreeFile(modfile)
	if err != nil {
		return "", fmt.Errorf("-root %s is not a module root: %w", root, err)
	}
	for _, l := range strings.Split(string(src), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", modfile)
}

// buildJudge builds the judge of the chapter in dir: the overlay ov, less
// every file of the package that is not a test file.
func (b builder) buildJudge(ctx context.Context, dir, binary string, ov overlay) (string, error) {
	jov := overlay{Replace: maps.Clone(ov.Replace), modfile: ov.modfile}
	abs := filepath.Join(b.root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			jov.Replace[filepath.Join(abs, e.Name())] = ""
		}
	}
	for f := range ov.Replace {
		if filepath.Dir(f) == abs && strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
			jov.Replace[f] = ""
		}
	}
	flags, err := jov.flags(b.tmp, strings.ReplaceAll(dir, "/", "_")+"-judge")
	if err != nil {
		return "", err
	}
	return buildJudge(ctx, b.root, dir, binary, flags)
}
