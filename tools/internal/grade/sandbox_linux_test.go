package grade

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSandbox runs a shell in the sandbox a subject runs in (as nobody when
// the test runs as root): it is pid 1 of its own namespace, sees no other
// process in /proc (this test's, say), may write its scratch folder and
// nothing else, and does not see the files beside it.
func TestSandbox(t *testing.T) {
	if !sandboxAvailable() {
		t.Skip("this system does not let the grader make namespaces")
	}
	outside, scratch := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := sandboxSpec{Writable: scratch, Dir: scratch, UID: -1, GID: -1}
	if os.Geteuid() == 0 {
		u, err := LookupUser("nobody")
		if err != nil {
			t.Skip("no user nobody to drop to")
		}
		spec.UID, spec.GID = int(u.uid), int(u.gid)
		if err := u.own(scratch); err != nil {
			t.Fatal(err)
		}
	}
	script := `echo $$; [ -e /proc/` + strconv.Itoa(os.Getpid()) + ` ] && echo sees-host-process; ` +
		`echo ok > "$1/mine" && echo wrote-scratch; (echo bad > "$2/theirs") 2>/dev/null && echo wrote-outside; ` +
		`(cat "$3") 2>/dev/null && echo read-outside; (echo bad > /etc/serverlab-sandbox) 2>/dev/null && echo wrote-etc; true`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", scratch, outside, secret)
	if err := sandboxed(cmd, spec); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sandboxed shell: %v\n%s", err, out)
	}
	if got, want := strings.Join(strings.Fields(string(out)), " "), "1 wrote-scratch"; got != want {
		t.Fatalf("in the sandbox the shell said %q; want %q: pid 1 of its namespace, its scratch folder writable, "+
			"no other file writable, and the folder beside it (another checkout's) not there", got, want)
	}
	if _, err := os.Stat(filepath.Join(outside, "theirs")); err == nil {
		t.Fatal("the sandboxed shell wrote outside its scratch folder")
	}
}

// netProbeEnv makes this test binary stand in for a judge
// (TestSandboxNetwork): it listens on 127.0.0.1, prints the port, and
// answers one connection with "judge".
const netProbeEnv = "SERVERLAB_TEST_JUDGE_PROBE"

func init() {
	if os.Getenv(netProbeEnv) == "" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(2)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Minute))
	c, err := ln.Accept()
	if err != nil {
		os.Exit(3)
	}
	_, _ = c.Write([]byte("judge\n"))
	c.Close()
	os.Exit(0)
}

// TestSandboxNetwork starts a judge and a subject as the grader starts them
// (the judge stands in, the subject is a shell) beside a listener of the
// host's on 127.0.0.1: the subject reaches its judge's listener on 127.0.0.1,
// but not the host's, and /proc/net/tcp does not show it the host's (nor
// /proc/net/unix the host's abstract Unix socket). A
// subject that shared the host's network could read other gradings' ports
// there and flood them (docs/grading.md, "Users and the sandbox").
func TestSandboxNetwork(t *testing.T) {
	if !sandboxAvailable() {
		t.Skip("this system does not let the grader make namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("only a grader running as root gives an exercise a network of its own")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash, whose /dev/tcp the subject dials with")
	}
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("host\n"))
			c.Close()
		}
	}()
	hostPort := host.Addr().(*net.TCPAddr).Port
	// And an abstract Unix socket, which has no file to hide: the network
	// namespace holds its name.
	abstract := "serverlab-test-host-" + strconv.Itoa(os.Getpid())
	hostUnix, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer hostUnix.Close()

	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	rn := &runner{env: os.Environ(), tmp: tmp, root: tmp}
	if u, err := LookupUser("nobody"); err == nil {
		rn.user = u
	}
	subj, err := rn.newSubject(exercise{binary: bash, pkgDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	defer subj.finish(0)
	subj.judgeEnd.Close()

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	judgeCmd := exec.Command(self)
	judgeCmd.Env = append(os.Environ(), netProbeEnv+"=1")
	judgeOut, err := judgeCmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := subj.startJudge(judgeCmd); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = judgeCmd.Process.Kill(); _ = waitTracked(judgeCmd) }()
	portLine := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(judgeOut).ReadString('\n')
		portLine <- strings.TrimSpace(line)
	}()
	var judgePort string
	select {
	case judgePort = <-portLine:
	case <-time.After(time.Minute):
		t.Fatal("the judge's stand-in printed no port in a minute")
	}
	if _, err := strconv.Atoi(judgePort); err != nil {
		t.Fatalf("the judge's stand-in said %q, not its port", judgePort)
	}

	// $1: the judge's port, $2: the host's, $3: the host's abstract socket.
	script := `dial() { (exec 3<>"/dev/tcp/127.0.0.1/$1" && read -t 10 line <&3 && echo "$2:$line") 2>/dev/null || echo "$2:unreachable"; }; ` +
		`dial "$1" judge; dial "$2" host; ` +
		`grep -q "0100007F:$(printf %04X "$2") " /proc/net/tcp && echo host:listed; ` +
		`grep -q "@$3" /proc/net/unix && echo host-unix:listed; true`
	subj.cmd.Args = append(subj.cmd.Args, "-c", script, "bash", judgePort, strconv.Itoa(hostPort), abstract)
	if err := subj.start(); err != nil {
		t.Fatal(err)
	}
	r := subj.finish(time.Minute)
	if got, want := strings.Join(strings.Fields(r.Output), " "), "judge:judge host:unreachable"; got != want {
		t.Fatalf("the sandboxed subject said %q (exit %d); want %q: it reaches its judge on 127.0.0.1, "+
			"but neither reaches nor sees (/proc/net/tcp) the host's listener on 127.0.0.1:%d, nor its abstract socket @%s — "+
			"judge and subject must share a network namespace of their own, its loopback up (netns_linux.go)",
			got, r.ExitCode, want, hostPort, abstract)
	}
}

// The student's code gets what a program needs of the grader's
// environment, not the instructor's secrets.
func TestSubjectEnvKeepsOnlyWhatProgramsNeed(t *testing.T) {
	got := subjectEnv([]string{"PATH=/bin", "GITHUB_TOKEN=ghp_x", "SSH_AUTH_SOCK=/s", "LC_ALL=C", "GOMAXPROCS=2",
		"SERVERLAB_TIME_SCALE=2", "AWS_SECRET_ACCESS_KEY=k", "HOME=/root"})
	want := []string{"PATH=/bin", "LC_ALL=C", "GOMAXPROCS=2", "SERVERLAB_TIME_SCALE=2", "HOME=/root"}
	if !slices.Equal(got, want) {
		t.Errorf("subjectEnv = %q, want %q", got, want)
	}
}
