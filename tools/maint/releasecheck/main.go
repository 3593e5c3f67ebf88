// Command releasecheck proves the student release as a student gets it: it
// builds the release, unpacks it in a temporary folder and runs there what a
// student runs — go vet, make grade (every
// untouched exercise must fail cleanly, and the grader must find every
// course file it lists), make status, next, hint, reset and help. make
// release-check runs it; make test runs it in its graded chain.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	keep := flag.Bool("keep", false, "keep the unpacked release (its folder is printed)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *keep, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release-check:", err)
		os.Exit(1)
	}
	fmt.Println("release-check: the student release passes its own vet, grade and student commands")
}

// run builds and unpacks the release, then runs each step in it.
func run(ctx context.Context, keep bool, out io.Writer) error {
	tmp, err := os.MkdirTemp("", "release-check-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(out, "release-check: unpacked in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	archive := filepath.Join(tmp, "release.tar.gz")
	if err := sh(ctx, out, "", nil, goTool(), "run", "./tools/cmd/student", "release", "-o", archive); err != nil {
		return err
	}
	if err := sh(ctx, out, "", nil, "tar", "-xzf", archive, "-C", tmp); err != nil {
		return err
	}
	rel := filepath.Join(tmp, "serverlab")
	if _, err := os.Stat(filepath.Join(rel, "solutions")); err == nil {
		return errors.New("the release ships solutions/")
	}
	env := []string{"SERVERLAB_CACHE_DIR=" + filepath.Join(tmp, "cache")}
	// go vet type-checks every package and test file of the release, so a
	// file that still needs solutions/ is caught here; the tools' and
	// suites' own tests are not run again: make unit runs them, under -race,
	// on the same files, and none of them behaves differently without
	// solutions/ except by skipping.
	err = timed(out, "go vet ./...", func() error { return sh(ctx, out, rel, env, goTool(), "vet", "./...") })
	if err != nil {
		return err
	}
	err = timed(out, "make grade REQUIRE=none (the starters: every exercise fails cleanly)",
		func() error { return checkGrade(ctx, out, rel, env) })
	if err != nil {
		return err
	}
	return timed(out, "make status, next, hint, reset, help", func() error { return checkStudentCommands(ctx, out, rel, env) })
}

// timed runs one step under its title and says how long it took, so that a
// slow release check names its slow step.
func timed(out io.Writer, title string, step func() error) error {
	fmt.Fprintln(out, "==", title)
	start := time.Now()
	err := step()
	fmt.Fprintf(out, "   ↳ %.1fs\n", time.Since(start).Seconds())
	return err
}

// courseFiles is the grader's note when it found every course file of the
// release's list.
var courseFiles = regexp.MustCompile(`(?m)^ *course files: all [0-9]+ match (the course's copies|the graded tree's own list)`)

// missingCourseFiles is the grader's note when the release's list and its
// files disagree.
var missingCourseFiles = regexp.MustCompile(`(?m)^ *course files: .*(not available here|not verified|is not one of the course).*$`)

// checkGrade grades the untouched starters: every exercise must fail
// cleanly (REQUIRE=none), and the grader must verify every course file.
func checkGrade(ctx context.Context, out io.Writer, rel string, env []string) error {
	var report bytes.Buffer
	err := sh(ctx, &report, rel, env, "make", "--no-print-directory", "grade", "REQUIRE=none")
	lines := strings.Split(strings.TrimRight(report.String(), "\n"), "\n")
	fmt.Fprintln(out, strings.Join(lines[max(0, len(lines)-3):], "\n"))
	if err != nil {
		out.Write(report.Bytes())
		return err
	}
	if m := missingCourseFiles.Find(report.Bytes()); m != nil {
		return fmt.Errorf("make grade in the release reports course files it should have (tools/internal/grade/course.sum must list the release's own files):\n%s", m)
	}
	if !courseFiles.Match(report.Bytes()) {
		return errors.New("make grade in the release did not say that every course file matches the course's copies")
	}
	return nil
}

// checkStudentCommands runs the student's other commands once each.
func checkStudentCommands(ctx context.Context, out io.Writer, rel string, env []string) error {
	if err := sh(ctx, out, rel, env, "make", "--no-print-directory", "status"); err != nil {
		return err
	}
	var next bytes.Buffer
	if err := sh(ctx, &next, rel, env, "make", "--no-print-directory", "next"); err != nil {
		return err
	}
	first, _, _ := strings.Cut(next.String(), "\n")
	fmt.Fprintln(out, first)
	if err := sh(ctx, io.Discard, rel, env, "make", "--no-print-directory", "hint", "EX=1.1"); err != nil {
		return err
	}
	var reset bytes.Buffer
	if err := sh(ctx, &reset, rel, env, "make", "--no-print-directory", "reset", "EX=1.1"); err != nil {
		return err
	}
	if !strings.Contains(reset.String(), "already as in the starter (the release") {
		return fmt.Errorf("make reset EX=1.1 on an untouched release said:\n%s", reset.String())
	}
	return sh(ctx, out, rel, env, "make", "--no-print-directory", "help")
}

// sh runs a command in dir (the current folder if empty) with env added,
// its output to out.
func sh(ctx context.Context, out io.Writer, dir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// goTool is the go command make passes down ($GO), or go.
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
