//go:build unix

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeGo stands in for the go command in make watch's recipe: "go run"
// exits 1 when it is interrupted, whatever the program it ran said (the go
// command's own rule), and "go build -o X" writes an X that, like the
// student command, ends with status 0 on Ctrl-C. Both say "ready" first.
// It is a Go program: a Go program takes SIGINT even when it started with
// it ignored, as go run and the student command do.
const fakeGo = `package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "build" {
		for i, a := range os.Args {
			if a == "-o" {
				self, _ := os.Open(os.Args[0])
				out, _ := os.OpenFile(os.Args[i+1], os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
				io.Copy(out, self)
				out.Close()
			}
		}
		return
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	fmt.Println("ready")
	<-sigs
	if len(os.Args) > 1 && os.Args[1] == "run" {
		os.Exit(1)
	}
}
`

// TestMakeWatchEndsQuietlyOnInterrupt: Ctrl-C is how make watch ends, and
// its recipe must then end with status 0, or make reports
// "make: *** [Makefile:…: watch] Error 1" (student3, watch01.out; 3 runs of
// 3 here). The recipe ran the watch with go run, which exits 1 whenever it
// was interrupted; and the shell's trap was lost, since a shell runs a
// recipe's last command by exec (dash does). The recipe is taken from the
// Makefile (make -n) and run as make runs it, with a stand-in go, and the
// whole process group gets SIGINT, as a terminal's Ctrl-C sends it.
func TestMakeWatchEndsQuietlyOnInterrupt(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on this machine")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	fake := filepath.Join(tmp, "go")
	if err := os.WriteFile(filepath.Join(tmp, "main.go"), []byte(fakeGo), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", fake, "main.go")
	build.Dir = tmp
	build.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in go: %v\n%s", err, out)
	}
	recipe, err := exec.Command(mk, "-C", root, "--no-print-directory", "-n", "watch", "CH=01", "EX=1_4", "GO="+fake).Output()
	if err != nil {
		t.Fatalf("make -n watch: %v", err)
	}
	// Started from a script or a tool in the background, the recipe's
	// shell inherits SIGINT ignored and cannot trap it: the recipe's
	// status is then the command's own. So it is here.
	signal.Ignore(syscall.SIGINT)
	defer signal.Reset(syscall.SIGINT)
	cmd := exec.Command("/bin/sh", "-c", string(recipe))
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if strings.TrimSpace(line) != "ready" {
			t.Fatalf("make watch's recipe with a stand-in go printed %q; want \"ready\"", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("make watch's recipe with a stand-in go: not ready within 30s\n%s", recipe)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("make watch's recipe did not end within 30s of Ctrl-C\n%s", recipe)
	}
	if err != nil {
		t.Errorf("make watch's recipe ended on Ctrl-C with %v (make would say \"*** [watch] Error 1\"); want "+
			"status 0. The recipe:\n%s\nstderr: %s", err, recipe, errOut.String())
	}
}
