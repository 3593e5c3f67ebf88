package grade

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runBoxed runs script with bash as a subject is run (newSubject, start,
// finish: its sandbox, its limits, as nobody under a root grader), with
// no judge, and returns how it ended and its scratch folder's path.
func runBoxed(t *testing.T, script string) (SubjectRun, string) {
	t.Helper()
	if !sandboxAvailable() {
		t.Skip("this system does not let the grader make namespaces")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	rn := &runner{env: os.Environ(), tmp: tmp, root: tmp}
	if os.Geteuid() == 0 {
		if u, err := LookupUser("nobody"); err == nil {
			rn.user = u
		}
	}
	subj, err := rn.newSubject(exercise{binary: bash, pkgDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	subj.judgeEnd.Close()
	subj.cmd.Args = append(subj.cmd.Args, "-c", script)
	if err := subj.start(); err != nil {
		subj.finish(0)
		t.Fatal(err)
	}
	return subj.finish(time.Minute), subj.scratch
}

// TestSubjectLimits: the subject runs with a bound on one file's size, on
// its tasks, no core files, a scratch folder of bounded size where the
// grader is root; and a folder it made r-x in its scratch folder does not
// outlive the exercise (cheater5 A and J).
func TestSubjectLimits(t *testing.T) {
	script := `echo "fsize=$(ulimit -f) nproc=$(ulimit -u) core=$(ulimit -c)"; ` +
		`echo "scratch=$(stat -f -c '%b*%S' "$TMPDIR")"; ` +
		`mkdir "$TMPDIR/keep" && echo x > "$TMPDIR/keep/big" && chmod 0555 "$TMPDIR/keep" && echo kept`
	r, scratch := runBoxed(t, script)
	got := strings.Fields(r.Output)
	want := []string{"fsize=" + strconv.FormatUint(subjectFileSize>>10, 10), "nproc=" + strconv.FormatUint(subjectTasks, 10), "core=0"}
	if len(got) < 5 || strings.Join(got[:3], " ") != strings.Join(want, " ") || got[4] != "kept" {
		t.Fatalf("the subject said %q (exit %d); want %q, its scratch folder's size, kept", r.Output, r.ExitCode, want)
	}
	if os.Geteuid() == 0 {
		blocks, bsize, _ := strings.Cut(strings.TrimPrefix(got[3], "scratch="), "*")
		b, _ := strconv.ParseInt(blocks, 10, 64)
		s, _ := strconv.ParseInt(bsize, 10, 64)
		if b*s != scratchSize {
			t.Errorf("the subject's scratch folder holds %d bytes; want a tmpfs of %d (a root grader bounds it)", b*s, scratchSize)
		}
	}
	if _, err := os.Lstat(scratch); err == nil {
		t.Errorf("the scratch folder %s (an r-x folder in it) outlived its exercise", scratch)
	}
}

// TestSubjectFileSizeLimit: a subject that writes a file past its limit
// is stopped there: a Go program (which ignores SIGXFSZ) and head, whose
// writer inherits that, get EFBIG, "file too large"; a program that keeps
// SIGXFSZ's default is ended, and the cause names the limit.
func TestSubjectFileSizeLimit(t *testing.T) {
	defer func(old uint64) { subjectFileSize = old }(subjectFileSize)
	subjectFileSize = 1 << 20
	r, _ := runBoxed(t, `head -c 4000000 /dev/zero > "$TMPDIR/big"; echo size=$(stat -c %s "$TMPDIR/big")`)
	if !strings.Contains(r.Output, "size=1048576") {
		t.Fatalf("a 4 MB file under a 1 MiB limit: the subject said %q; want the file stopped at 1048576 bytes", r.Output)
	}
	r = SubjectRun{ExitCode: -1, Signal: "file size limit exceeded", Limit: "its file size limit (1 MiB a file)"}
	if out := Classify(Run{Test: "TestX", Subject: &r}); out.Cause != CauseExited || !strings.Contains(out.Message, "file size limit") {
		t.Errorf("classified %s: %s; want exited, naming the file size limit", out.Cause, out.Message)
	}
}

// TestSubjectMemoryLimit: a subject that allocates past its memory limit is
// ended by the kernel, and the cause names the limit (a root grader, with a
// memory controller it may use).
func TestSubjectMemoryLimit(t *testing.T) {
	if dir, _ := ownMemoryCgroup(); dir == "" {
		t.Skip("no memory cgroup the grader may make here (a root grader with a memory controller makes one)")
	}
	defer func(old int64) { subjectMemory = old }(subjectMemory)
	subjectMemory = 64 << 20
	r, _ := runBoxed(t, `x=$(head -c 200000000 /dev/zero | tr '\0' x); echo survived ${#x}`)
	if strings.Contains(r.Output, "survived") || !strings.Contains(r.Limit, "memory") {
		t.Fatalf("200 MB under a 64 MiB limit: the subject said %q, signal %q, exit %d, limit %q; want it ended, the memory limit named",
			r.Output, r.Signal, r.ExitCode, r.Limit)
	}
}
