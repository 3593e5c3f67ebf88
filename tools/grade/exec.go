package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// runner runs one exercise's test alone under test2json.
type runner struct {
	test2json []string // the command: the tool's path, or go tool test2json
	env       []string
}

// newRunner finds test2json once: `go tool -n` prints the path of the built
// tool, and running it directly saves starting the go command for every
// exercise.
func newRunner(ctx context.Context, root string) *runner {
	rn := &runner{test2json: []string{"go", "tool", "test2json"}, env: raceEnv(os.Environ())}
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", "test2json")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		if path := strings.TrimSpace(string(out)); path != "" {
			if _, err := os.Stat(path); err == nil {
				rn.test2json = []string{path}
			}
		}
	}
	return rn
}

// raceEnv turns off the race runtime's one-second sleep at exit, which would
// otherwise add a second to every passing exercise. A GORACE the caller set
// still applies: later options win.
func raceEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	gorace := "atexit_sleep_ms=0"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			gorace += " " + v
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GORACE="+gorace)
}

// killGrace is how long past its own -test.timeout a test binary may take to
// print its goroutine dump and exit before the grader kills it.
func killGrace(timeout time.Duration) time.Duration {
	return 5*time.Second + timeout/10
}

// exercise is one test to run: where its binary is and how long it may take.
type exercise struct {
	binary  string // the chapter's compiled test binary
	pkgDir  string // the package directory: the test's working directory, as under go test
	pkg     string // import path, for test2json's events
	test    string
	timeout time.Duration
}

// run runs the exercise's test alone and returns what the classifier needs,
// and how long it took. An error means the grader could not run it at all
// (or was interrupted), not that the test failed.
func (rn *runner) run(ctx context.Context, ex exercise) (Run, time.Duration, error) {
	runCtx, cancel := context.WithTimeout(ctx, ex.timeout+killGrace(ex.timeout))
	defer cancel()

	args := append(rn.test2json[1:len(rn.test2json):len(rn.test2json)],
		"-t", "-p", ex.pkg, ex.binary,
		"-test.v=test2json",
		"-test.run", "^"+ex.test+"$",
		"-test.count=1",
		"-test.timeout="+ex.timeout.String())
	cmd := exec.CommandContext(runCtx, rn.test2json[0], args...)
	cmd.Dir = ex.pkgDir
	cmd.Env = rn.env
	inOwnProcessGroup(cmd)
	// Output that something the test started keeps writing after the
	// process group is gone must not hold the grader up.
	cmd.WaitDelay = 2 * time.Second

	pr, pw := io.Pipe()
	cmd.Stdout = pw
	var stderr limitedBuffer
	cmd.Stderr = &stderr

	var (
		events  []Event
		readErr error
		reading sync.WaitGroup
	)
	reading.Go(func() {
		events, readErr = readEvents(pr)
		_, _ = io.Copy(io.Discard, pr) // never block the writer, even after a read error
	})

	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		reading.Wait()
		return Run{}, 0, err
	}
	waitErr := cmd.Wait()
	wall := time.Since(start)
	_ = killGroup(cmd) // sweep up anything the test left running
	pw.Close()
	reading.Wait()

	if ctx.Err() != nil {
		return Run{}, wall, ctx.Err()
	}
	killed := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	if readErr != nil && !killed {
		return Run{}, wall, readErr
	}
	if s := stderr.String(); s != "" {
		events = append(events, Event{Action: "output", Output: s})
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !killed && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return Run{}, wall, waitErr
	}
	return Run{Test: ex.test, Events: events, Timeout: ex.timeout, Killed: killed}, wall, nil
}

// limitedBuffer keeps the first 64 KiB written to it: test2json's own
// complaints, which are short.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := 64<<10 - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
