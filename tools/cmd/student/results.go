package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"serverlab/tools/internal/rubric"
)

// result is what one run of one exercise's test said.
type result struct {
	Pass   bool     `json:"pass"`
	Cause  string   `json:"cause,omitempty"`  // why it did not pass: failed, build error, panic, race, leak, timeout, not run, integrity (applyGate)
	Output []string `json:"output,omitempty"` // the test's own output, whole: watch shows the first failure in full
}

// chapterResults are the latest results of a chapter's exercises, valid for
// the content the key was computed from. An exercise missing from Results has
// not run since the last change.
type chapterResults struct {
	Key     string            `json:"key"`
	Results map[string]result `json:"results"`
}

// cacheDir is where results and hint counts are kept: $SERVERLAB_CACHE_DIR,
// or serverlab/ in the user cache directory.
func cacheDir() (string, error) {
	if d := os.Getenv("SERVERLAB_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set SERVERLAB_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "serverlab"), nil
}

// resultsPath is the file that keeps one chapter's results for this checkout.
func (c *course) resultsPath(ch string) (string, error) {
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "results", c.checkoutKey()+"-"+ch+".json"), nil
}

// checkoutKey names this checkout in the shared cache directory: two copies
// of the course keep their results and hint counts apart.
func (c *course) checkoutKey() string {
	sum := sha256.Sum256([]byte(c.root))
	return hex.EncodeToString(sum[:6])
}

func (c *course) loadResults(ch string) chapterResults {
	var cr chapterResults
	if p, err := c.resultsPath(ch); err == nil {
		if b, err := os.ReadFile(p); err == nil {
			_ = json.Unmarshal(b, &cr) // a damaged cache is an empty one
		}
	}
	return cr
}

func (c *course) saveResults(ch string, cr chapterResults) error {
	p, err := c.resultsPath(ch)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(cr)
	if err != nil {
		return err
	}
	return writeFile(p, b)
}

// inputKey fingerprints everything a chapter's test results depend on: the
// chapter's files, the suites and given code (tests/, tools/), go.mod and
// go.sum, the Go version and the flags. Equal keys mean the tests would see
// the same code, so their last results still hold.
func (c *course) inputKey(ch string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s race=%v\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, c.race)
	files, err := c.chapterFiles(ch)
	if err != nil {
		return "", err
	}
	for _, dir := range []string{"tests", "tools"} {
		err := filepath.WalkDir(filepath.Join(c.root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "student") {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() && strings.HasSuffix(path, ".go") {
				rel, _ := filepath.Rel(c.root, path)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	files = append(files, "go.mod", "go.sum")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(c.root, f))
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(f), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fresh returns the chapter's stored results if they hold for its current
// content and cover every exercise.
func (c *course) fresh(ch rubric.Chapter) (chapterResults, string, bool, error) {
	key, err := c.inputKey(ch.ID)
	if err != nil {
		return chapterResults{}, "", false, err
	}
	cr := c.loadResults(ch.ID)
	if cr.Key != key {
		return chapterResults{Key: key, Results: map[string]result{}}, key, false, nil
	}
	for _, ex := range ch.Exercises {
		if _, ok := cr.Results[ex.ID]; !ok {
			return cr, key, false, nil
		}
	}
	return cr, key, true, nil
}

// results returns every chapter's results, running in one go test the
// chapters whose content changed since they last ran. Chapters this system
// cannot run (chapter 05 off Linux) are left out.
func (c *course) results(ctx context.Context) (map[string]chapterResults, error) {
	all := map[string]chapterResults{}
	var stale []rubric.Chapter
	for _, ch := range c.rb.Chapters {
		if ok, _ := supported(ch.ID); !ok {
			continue
		}
		if _, err := os.Stat(filepath.Join(c.root, chapterDir(ch.ID))); err != nil {
			continue
		}
		cr, key, ok, err := c.fresh(ch)
		if err != nil {
			return nil, err
		}
		if ok {
			all[ch.ID] = cr
			continue
		}
		all[ch.ID] = chapterResults{Key: key, Results: map[string]result{}}
		stale = append(stale, ch)
	}
	if len(stale) == 0 {
		return all, nil
	}
	var names []string
	for _, ch := range stale {
		names = append(names, ch.ID)
	}
	fmt.Fprintf(c.log, "running the tests of chapter %s (no results yet for their current code)…\n", strings.Join(names, ", "))
	if note := busyBefore(loadNow(), "they"); note != "" {
		fmt.Fprintln(c.log, note)
	}
	got, err := c.runTests(ctx, stale, nil)
	if err != nil {
		return nil, err
	}
	c.ranTests = true
	for _, ch := range stale {
		cr := all[ch.ID]
		for _, ex := range ch.Exercises {
			cr.Results[ex.ID] = got[ex.ID]
		}
		if err := c.saveResults(ch.ID, cr); err != nil {
			fmt.Fprintf(c.log, "note: cannot keep the results for next time: %v\n", err)
		}
	}
	return all, nil
}

// testEvent is one line of go test -json (test2json).
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// runTests runs the graded tests of the given chapters (only the exercise
// only, if it is not nil) in one go test and returns a result per exercise id.
// Tests that a crash kept from reporting are run again one by one, so that
// one panic costs one exercise. Then make grade's gate judges the code
// (applyGate): what it refuses scores nothing, whatever go test said.
func (c *course) runTests(ctx context.Context, chapters []rubric.Chapter, only *rubric.Exercise) (map[string]result, error) {
	c.checkRace()
	byTest := map[string]string{} // test name → exercise id
	pkgOf := map[string]string{}  // test name → its chapter's package
	var pkgs, names []string
	for _, ch := range chapters {
		pkg := "./" + filepath.ToSlash(chapterDir(ch.ID)) + "/"
		pkgs = append(pkgs, pkg)
		for _, ex := range ch.Exercises {
			if only == nil || only.ID == ex.ID {
				byTest[ex.Test] = ex.ID
				pkgOf[ex.Test] = pkg
				names = append(names, ex.Test)
			}
		}
	}
	c.warnColdBuild(ctx, pkgs)
	got, build, err := c.goTest(ctx, pkgs, names, byTest)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		id := byTest[name]
		if _, ok := got[id]; ok {
			continue
		}
		if build != nil {
			got[id] = result{Cause: "build error", Output: build}
			continue
		}
		// The binary died before this test reported: run it alone.
		alone, _, err := c.goTest(ctx, []string{pkgOf[name]}, []string{name}, byTest)
		if err != nil {
			return nil, err
		}
		if r, ok := alone[id]; ok {
			got[id] = r
		} else {
			got[id] = result{Cause: "not run"}
		}
	}
	c.applyGate(ctx, chapters, got)
	return got, nil
}

// goTest runs go test -json on pkgs for the named tests. It returns the
// results it saw and, if a package did not build, the compiler's output.
func (c *course) goTest(ctx context.Context, pkgs, names []string, byTest map[string]string) (map[string]result, []string, error) {
	args := []string{"test", "-json", "-count=1", "-fullpath", "-timeout=10m"}
	if c.race {
		args = append(args, "-race")
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	args = append(args, "-run", "^("+strings.Join(quoted, "|")+")$")
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = c.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("go test: %w", err)
	}
	got, build := collect(bufio.NewReader(out), byTest)
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if len(got) == 0 && build == nil && werr != nil && stderr.Len() > 0 {
		// go test itself failed (no such package, a broken go.mod...).
		build = strings.Split(strings.TrimSpace(stderr.String()), "\n")
	}
	return got, build, nil
}

// collect reads go test -json's events and returns a result per graded
// exercise and the compiler's output, if a package did not build. The
// output of a graded test includes its subtests' (test2json names them
// "TestX/sub"): most checks fail inside a t.Run, and a race report, panic or
// watchdog printed there is what tells the cause.
func collect(r io.Reader, byTest map[string]string) (map[string]result, []string) {
	got := map[string]result{}
	output := map[string][]string{}
	var build []string
	dec := json.NewDecoder(r)
	for {
		var ev testEvent
		if err := dec.Decode(&ev); err != nil {
			break
		}
		if ev.Action == "build-output" {
			build = append(build, strings.TrimRight(ev.Output, "\n"))
		}
		top, _, sub := strings.Cut(ev.Test, "/")
		id, graded := byTest[top]
		if !graded {
			continue
		}
		switch ev.Action {
		case "output":
			if !strings.HasPrefix(ev.Output, "=== ") {
				output[top] = append(output[top], strings.TrimRight(ev.Output, "\n"))
			}
		case "pass":
			if !sub {
				got[id] = result{Pass: true}
			}
		case "fail", "skip":
			// A subtest's verdict is not the exercise's: a skipped
			// subtest of a passing test is no lost point.
			if !sub {
				got[id] = result{Cause: causeOf(ev.Action, output[top]), Output: output[top]}
			}
		}
	}
	return got, build
}

// causeOf names why a test did not pass, from its output, with the
// grader's words.
func causeOf(action string, out []string) string {
	text := strings.Join(out, "\n")
	switch {
	case action == "skip":
		return "not run"
	case strings.Contains(text, "WARNING: DATA RACE"):
		return "race"
	case strings.Contains(text, "panic:"):
		return "panic"
	case strings.Contains(text, "unexpected goroutines"):
		return "leak"
	case strings.Contains(text, "timed out") || strings.Contains(text, "watchdog"):
		return "timeout"
	}
	return "failed"
}

// checkRace turns -race off, once and with a note, when it cannot work: the
// race detector needs cgo and a C compiler.
func (c *course) checkRace() {
	if !c.race || c.raceChecked {
		return
	}
	c.raceChecked = true
	out, err := exec.Command(goTool(), "env", "CGO_ENABLED", "CC").Output()
	fields := strings.Fields(string(out))
	if err == nil && len(fields) == 2 && fields[0] == "1" {
		if _, err := exec.LookPath(fields[1]); err == nil {
			return
		}
	}
	c.race = false
	fmt.Fprintln(c.log, "note: running without -race: the race detector needs cgo and a C compiler, and this system has none.\n"+
		"      Install one (Debian/Ubuntu: apt install gcc; macOS: xcode-select --install; Windows: a MinGW-w64 gcc)\n"+
		"      or use the dev container (.devcontainer); make grade will count races only with it.")
}

// goTool is the go command: $GO (the Makefile passes its own) or go.
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
