package main

import (
	"fmt"
	"strings"
	"testing"
)

// offTheList passes 1.1's test by way of a call chapter 01's allow-list
// does not name (syscall is restricted, member by member): go test passes
// it, make grade's gate refuses the chapter.
const offTheList = `package discovery

import "syscall"

// One returns 1.
func One() int {
	if syscall.Getpid() > 0 {
		return 1
	}
	return 0
}

// Two returns 2.
func Two() int {
	// TODO(ex 1.2): return 2,
	// the number after 1.
	return 0
}
`

// TestStatusAppliesTheGate: the points status, next and watch show are
// points make grade gives. A student who passed go test with code the gate
// refuses (round 3: unix.Dup in chapter 05, 20 points in status, 0 in
// grade) sees the refusal, in the gate's words, where the points would be.
func TestStatusAppliesTheGate(t *testing.T) {
	n, _, _ := chapter01(t)
	root := fixture(t, offTheList)
	out, log, err := student(t, root, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, log)
	}
	mustContain(t, "status of a chapter the gate refuses", out,
		"0/100", fmt.Sprintf("0 of %d", n),
		"make grade refuses chapter 01's code",
		"chapters/01/ex.go:3: chapter 01's code needs no syscall:",
		"docs/grading.md#the-gate", "make allowed CH=01")
	if strings.Contains(log, "could not check") {
		t.Errorf("the gate did not run:\n%s", log)
	}
	if c := strings.Count(out, "needs no syscall"); c != 1 {
		t.Errorf("status shows the refusal %d times, want once per chapter:\n%s", c, out)
	}

	next, _, err := student(t, root, "next", "1.1")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "next 1.1", next, "Last run: integrity", "needs no syscall", "exercise 1.1 scores 0 there whatever go test says")

	// The student's code without the call: the points come back.
	if err := writeFile(root+"/chapters/01/ex.go", []byte(solvedOne)); err != nil {
		t.Fatal(err)
	}
	out, _, err = student(t, root, "status")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "refuses") {
		t.Errorf("status refuses code the gate allows:\n%s", out)
	}
}

// TestAllowed: the command the open track's text points to lists the
// chapter's allow-list and the exercises' forbidden given code.
func TestAllowed(t *testing.T) {
	root := fixture(t, stubGo)
	out, _, err := student(t, root, "allowed", "5")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "allowed 5", out, "Chapter 05's code may use", "golang.org/x/sys/unix.EpollCtl", "docs/grading.md#the-gate")
	if strings.Contains(out, "unix.Dup\n") {
		t.Errorf("allowed 5 lists unix.Dup:\n%s", out)
	}
	out, _, err = student(t, root, "allowed", "01")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "allowed 01", out, "serverlab/tools/given/wire", "but not serverlab/tools/given/wire.ReadFrame in exercise 1.1")
}
