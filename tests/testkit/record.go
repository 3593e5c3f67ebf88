package testkit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"sync"
)

// Completion records: how a check proves to tools/cmd/grade that it passed.
//
// The grader does not take a test's "--- PASS" line, or the binary's exit
// status, as a pass: anything in the process can print the one or call
// os.Exit(0) for the other. When it runs a test binary it sets
// $SERVERLAB_GRADE and hands the binary two extra file descriptors: fd 3, a
// pipe holding a fresh secret for this run only, and fd 4, where the
// binary writes its records. This file reads the secret during package
// initialisation, before any code of the student's can run (the grader's
// screening forbids init functions and start-up code in the student's
// files), keeps it in an unexported variable, and closes fd 3. After the
// tests have run, and only if they all passed and goleak found nothing,
// Main writes one record per top-level test that went through New:
//
//	pass <test name> <hex HMAC-SHA256(secret, "pass\x00" + test name)>
//
// The grader awards points only for a record whose MAC it can verify.
// Printing fake lines, writing guessed records or exiting early therefore
// earns nothing. See docs/grading.md for what this does not defend against.
const (
	gradeEnv  = "SERVERLAB_GRADE"
	secretFD  = 3
	recordFD  = 4
	maxSecret = 256
)

var record struct {
	secret []byte
	out    *os.File

	mu     sync.Mutex
	checks map[string]bool // top-level tests that went through New
}

func init() {
	mode := os.Getenv(gradeEnv)
	os.Unsetenv(gradeEnv) // children (servers a suite starts) are not the harness
	switch mode {
	case "fd":
		in := os.NewFile(secretFD, "serverlab-grade-secret")
		if in == nil {
			return
		}
		secret, err := io.ReadAll(io.LimitReader(in, maxSecret))
		in.Close()
		if err == nil && len(secret) >= 16 {
			record.secret, record.out = secret, os.NewFile(recordFD, "serverlab-grade-record")
		}
	case "env":
		// Where a process cannot inherit extra descriptors (Windows), the
		// grader falls back to the environment, and says that such a grade
		// is not tamper-proof.
		secret, path := os.Getenv(gradeEnv+"_SECRET"), os.Getenv(gradeEnv+"_RECORD")
		os.Unsetenv(gradeEnv + "_SECRET")
		if len(secret) < 16 || path == "" {
			return
		}
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			record.secret, record.out = []byte(secret), f
		}
	}
}

// noteCheck remembers that test (a top-level test, or a subtest of one) runs
// checks through New; only such tests get a record.
func noteCheck(test string) {
	top, _, _ := strings.Cut(test, "/")
	record.mu.Lock()
	defer record.mu.Unlock()
	if record.checks == nil {
		record.checks = map[string]bool{}
	}
	record.checks[top] = true
}

// writeRecords is called with the binary's final exit code; it writes the
// records only for a clean, passing run.
func writeRecords(exitCode int) {
	if exitCode != 0 || record.out == nil {
		return
	}
	record.mu.Lock()
	defer record.mu.Unlock()
	var b strings.Builder
	for test := range record.checks {
		b.WriteString("pass " + test + " " + recordMAC(record.secret, test) + "\n")
	}
	_, _ = io.WriteString(record.out, b.String())
	_ = record.out.Close()
}

// recordMAC is the MAC of a pass of test under secret. tools/cmd/grade computes
// the same to check a record.
func recordMAC(secret []byte, test string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("pass\x00" + test))
	return hex.EncodeToString(m.Sum(nil))
}

// stuckGoroutines lists, for the watchdog's message, where the student's
// code is blocked: the goroutines with frames in a chapter's (or a
// solution's) non-test files, those frames only, at most two goroutines of
// three frames. The suite's and the runtime's frames say nothing to a
// student. It returns "" when no goroutine is in their code.
func stuckGoroutines() string {
	buf := []byte(allStacks())
	var b strings.Builder
	shown := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.Split(g, "\n")
		var frames []string
		for i := 2; i < len(lines) && len(frames) < 6; i++ {
			file := strings.TrimSpace(lines[i])
			if !strings.HasPrefix(lines[i], "\t") || strings.Contains(file, "_test.go:") ||
				!strings.Contains(file, "/chapters/") && !strings.Contains(file, "/solutions/") {
				continue
			}
			if at := strings.LastIndex(file, " +0x"); at > 0 {
				file = file[:at]
			}
			frames = append(frames, "    "+lines[i-1], "        "+file)
		}
		if len(frames) == 0 {
			continue
		}
		if shown == 0 {
			b.WriteString("Where your code is blocked:\n")
		}
		b.WriteString("  " + lines[0] + "\n" + strings.Join(frames, "\n") + "\n")
		if shown++; shown == 2 {
			break
		}
	}
	return b.String()
}
