package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// maxBuildLines is how much of the compiler's complaint a build error keeps:
// the first errors are the ones to fix first.
const maxBuildLines = 10

// buildChapter compiles a chapter's test binary, once, with the race
// detector, as `go test -c -race -o binary ./dir` run in the module root. It
// returns a build failure (a message for the student) or an error (the
// grader could not go on, e.g. it was interrupted). A non-empty overlay is a
// go build -overlay file (the maintainers' ladder and mutants use one).
func buildChapter(ctx context.Context, root, dir, binary, overlay string) (failure string, err error) {
	info, statErr := os.Stat(filepath.Join(root, filepath.FromSlash(dir)))
	if statErr != nil || !info.IsDir() {
		return fmt.Sprintf("%s does not exist: the rubric lists a chapter that is not in this checkout", dir), nil
	}
	args := []string{"test", "-c", "-race", "-o", binary}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./"+dir)...)
	cmd.Dir = root
	out, runErr := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if runErr != nil {
		var exitErr *exec.ExitError
		if !errors.As(runErr, &exitErr) {
			return "", fmt.Errorf("run go test -c: %w", runErr)
		}
		return firstLines(out, maxBuildLines), nil
	}
	if _, err := os.Stat(binary); err != nil {
		return fmt.Sprintf("%s has no test files (*_test.go): there is nothing to run", dir), nil
	}
	return "", nil
}

// firstLines returns the first n non-empty lines of out, noting what it left.
func firstLines(out []byte, n int) string {
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

// position is where a test function is declared.
type position struct {
	file string // relative to the module root, slash-separated
	line int
}

var testDecl = regexp.MustCompile(`^func (Test\w+)\(`)

// findTests maps the test functions declared in dir/*_test.go to where they
// are, so that reports can point at them. It is best effort: a file it cannot
// read just goes without positions.
func findTests(root, dir string) map[string]position {
	found := map[string]position{}
	files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*_test.go"))
	for _, f := range files {
		src, err := os.ReadFile(f)
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
func modulePath(root string) (string, error) {
	src, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("-root %s is not a module root: %w", root, err)
	}
	for _, l := range strings.Split(string(src), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", filepath.Join(root, "go.mod"))
}
