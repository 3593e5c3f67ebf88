package grade

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// runner runs one exercise's test alone and turns its output into
// test2json events.
type runner struct {
	test2json string // the tool's path, or "" for go tool test2json
	env       []string
	user      *Credential // run test binaries as this user; nil: as the grader
	tmp       string      // the grader's scratch directory: binaries, the subjects' scratch folders
	root      string      // the module root: what a sandboxed subject may read of the checkout
	failFast  bool        // Options.FailFast

	mu                sync.Mutex
	maxScale, maxLoad float64 // the busiest an exercise started (measureLoad)
}

// newRunner finds test2json once: `go tool -n` prints the path of the built
// tool, and running it directly saves starting the go command for every
// exercise.
func newRunner(ctx context.Context, root, tmp string, user *Credential) *runner {
	rn := &runner{env: raceEnv(os.Environ()), user: user, tmp: tmp, root: root}
	if user != nil {
		// The user's own temporary directory (and home): the tests' files
		// go there, the grader's stay out of reach.
		home := filepath.Join(tmp, "home")
		if err := os.Mkdir(home, 0o700); err == nil && user.own(home) == nil {
			rn.env = append(rn.env, "TMPDIR="+home, "HOME="+home)
		}
	}
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", "test2json")
	cmd.Dir = root
	if out, err := outputTracked(cmd, false); err == nil {
		if path := strings.TrimSpace(string(out)); path != "" {
			if _, err := os.Stat(path); err == nil {
				rn.test2json = path
			}
		}
	}
	return rn
}

func (rn *runner) test2jsonCmd(pkg string) *exec.Cmd {
	if rn.test2json != "" {
		return exec.Command(rn.test2json, "-t", "-p", pkg)
	}
	return exec.Command("go", "tool", "test2json", "-t", "-p", pkg)
}

// raceEnv is the environment the processes of a run start from: the
// grader's, without any GORACE, role or limit the grader's caller set (the grader
// alone decides how the race detector reports, see subjectGORACE), and
// without the race runtime's one-second sleep at exit, which would add a
// second to every passing exercise.
func raceEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, "GORACE=") || strings.HasPrefix(kv, judge.RoleEnv+"=") || strings.HasPrefix(kv, judge.SocketIDEnv+"=") ||
			strings.HasPrefix(kv, testkit.LimitEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GORACE=atexit_sleep_ms=0")
}

// killGrace is how long past its own -test.timeout a test binary may take to
// print its goroutine dump and exit before the grader kills it.
func killGrace(timeout time.Duration) time.Duration {
	return 5*time.Second + timeout/10
}

// exercise is one test to run: where its binary is and how long it may take.
type exercise struct {
	binary  string  // the chapter's compiled test binary: the subject
	judge   string  // the judge's binary: the wiring without the student's code
	scale   float64 // the factor the checks' waits are multiplied by (busy machine, a run again alone)
	pkgDir  string  // the package directory: the test's working directory, as under go test
	pkg     string  // import path, for test2json's events
	test    string
	timeout time.Duration
	// extensions is how many more timeouts the judge may give the exercise
	// while its processes are starved of a processor (testkit.LimitEnv).
	extensions int
	student    string // the graded package's directory, slash-separated: whose frames messages show
}

// backstop is the -test.timeout of an exercise's judge: past its last
// extension, so that the judge's own limit (testkit.LimitEnv) ends it first
// and go test's ends it only if that one could not.
func (ex exercise) backstop() time.Duration {
	return ex.timeout*time.Duration(1+ex.extensions) + killGrace(ex.timeout)
}

// run runs the exercise's test alone and returns what the classifier needs,
// and how long it took. An error means the grader could not run it at all
// (or was interrupted), not that the test failed.
//
// The judge binary runs the test, its output piped into test2json, and the
// subject serves it over a socket pair (fd 3 of both; fd 4 of the judge
// tells it the subject's pid): the judge's events are the verdict, the
// subject's end (its exit status, observed by the grader) only names a
// cause.
func (rn *runner) run(ctx context.Context, ex exercise) (Run, time.Duration, error) {
	cmd := exec.Command(ex.judge,
		"-test.v=test2json",
		"-test.run", "^"+ex.test+"$",
		"-test.count=1",
		"-test.timeout="+ex.backstop().String(),
		"-test.paniconexit0",
		"-test.fullpath")
	if rn.failFast {
		cmd.Args = append(cmd.Args, "-test.failfast")
	}
	cmd.Dir = ex.pkgDir
	// Both run as the -user, if one was given, so that the files a check
	// makes are the server's to use. The judge makes itself undumpable
	// (tests/judge) before the subject starts, so that the subject can
	// neither trace it nor reach its memory or descriptors; it can only end
	// or stop it, which loses the point. Both start in a network of their
	// own where the grader can make one (startJudge, netns_linux.go): the
	// checks reach the subject's servers on 127.0.0.1, and nothing else is
	// there.
	subj, err := rn.newSubject(ex)
	if err != nil {
		return Run{}, 0, err
	}
	defer func() {
		if subj != nil {
			subj.finish(0)
		}
	}()
	cmd.Env = append(rn.env[:len(rn.env):len(rn.env)], judge.RoleEnv+"="+judge.Judge,
		testkit.LimitEnv+"="+testkit.FormatLimit(ex.timeout, ex.extensions))
	if ex.scale > 1 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%.2f", testkit.TimeScaleEnv, ex.scale))
	}
	if subj.scratch != "" {
		cmd.Env = append(cmd.Env, "TMPDIR="+subj.scratch)
	}
	// fd 3: the socket; fd 4: where the grader writes the subject's pid.
	pidR, pidW, err := os.Pipe()
	if err != nil {
		return Run{}, 0, err
	}
	defer pidW.Close()
	defer pidR.Close()
	cmd.ExtraFiles = []*os.File{subj.judgeEnd, pidR}
	subj.tellPID = pidW
	if err := rn.asStudent(cmd); err != nil {
		return Run{}, 0, err
	}

	// The binary's stdout and stderr are one pipe, as under go test, read by
	// test2json.
	outR, outW, err := os.Pipe()
	if err != nil {
		return Run{}, 0, err
	}
	cmd.Stdout, cmd.Stderr = outW, outW
	conv := rn.test2jsonCmd(ex.pkg)
	conv.Stdin = outR
	// Not conv.StdoutPipe: Wait closes that one, and the reader below must
	// see everything test2json wrote.
	convOut, convW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Run{}, 0, err
	}
	defer convOut.Close()
	conv.Stdout = convW
	var convErr limitedBuffer
	conv.Stderr = &convErr
	err = startTracked(conv)
	convW.Close()
	outR.Close()
	if err != nil {
		outW.Close()
		return Run{}, 0, err
	}

	var (
		events  []Event
		readErr error
		reading sync.WaitGroup
	)
	reading.Go(func() {
		events, readErr = readEvents(convOut)
		_, _ = io.Copy(io.Discard, convOut) // never block the writer, even after a read error
	})

	endRun := beginRun()
	start := time.Now()
	if err := subj.startJudge(cmd); err != nil {
		endRun()
		outW.Close()
		_ = waitTracked(conv)
		reading.Wait()
		return Run{}, 0, err
	}
	outW.Close()
	subj.judgeEnd.Close()
	awaitProtected(cmd.Process.Pid)
	if err := subj.start(); err != nil {
		_ = killGroup(cmd)
		endRun()
		_ = waitTracked(cmd)
		return Run{}, 0, err
	}
	fmt.Fprintf(subj.tellPID, "%d\n", subj.cmd.Process.Pid)
	subj.tellPID.Close()
	exitCode, killed, waitErr := waitLimited(ctx, cmd, ex.backstop()+killGrace(ex.backstop()))
	wall := time.Since(start)
	_ = killGroup(cmd) // sweep up anything the test left running
	// The judge has gone, and with it its end of the socket: a subject that
	// is still there is given a moment to see it.
	subject := subj.finish(2 * time.Second)
	subj = nil
	endRun()
	// Output that something escaped keeps writing must not hold the grader
	// up: test2json gets two seconds to see the end of its input.
	convDone := make(chan struct{})
	go func() { _ = waitTracked(conv); close(convDone) }()
	select {
	case <-convDone:
	case <-time.After(2 * time.Second):
		_ = conv.Process.Kill()
		<-convDone
	}
	reading.Wait()

	if ctx.Err() != nil {
		return Run{}, wall, ctx.Err()
	}
	if waitErr != nil {
		return Run{}, wall, waitErr
	}
	if readErr != nil && !killed {
		return Run{}, wall, readErr
	}
	if s := convErr.String(); s != "" {
		events = append(events, Event{Action: "output", Output: s})
	}
	run := Run{
		Test: ex.test, Events: events, Timeout: ex.timeout, Killed: killed,
		ExitCode: exitCode, Student: ex.student, Subject: &subject,
	}
	if st := cmd.ProcessState; st != nil {
		run.CPU = st.UserTime() + st.SystemTime()
	}
	run.Wall = wall
	return run, wall, nil
}

// waitLimited waits for cmd, killing its process group when limit passes or
// ctx is done. It returns the exit code (-1 if a signal ended it) and
// whether the grader killed it for its time.
func waitLimited(ctx context.Context, cmd *exec.Cmd, limit time.Duration) (code int, killed bool, err error) {
	done := make(chan error, 1)
	go func() { done <- waitTracked(cmd) }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		killed = true
		_ = killGroup(cmd)
		err = <-done
	case <-ctx.Done():
		_ = killGroup(cmd)
		err = <-done
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, killed, nil
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), killed, nil
	}
	return -1, killed, err
}

// limitedBuffer keeps the first 64 KiB written to it: test2json's own
// complaints, which are short.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int // 0: 64 KiB
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := cmp.Or(b.max, 64<<10) - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
