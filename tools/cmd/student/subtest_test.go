package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// subtestTests is the fixture's wiring with exercise 1.2's failure inside a
// t.Run, as most of the course's checks fail: the student must see the
// subtest's want/got, not only "--- FAIL: TestEx1_2_WriteFrame".
const subtestTests = `package discovery

import "testing"

func TestEx1_1_ReadFrame(t *testing.T) {
	t.Run("skipped", func(t *testing.T) { t.Skip("a skipped subtest costs nothing") })
	if One() != 1 {
		t.Fatalf("One() = %d, want 1", One())
	}
}

func TestEx1_2_WriteFrame(t *testing.T) {
	t.Run("two", func(t *testing.T) {
		if Two() != 2 {
			t.Fatalf("sent Two(); want 2; got %d (exercise 1.2)", Two())
		}
	})
}

func TestEx1_3_UserStore(t *testing.T) {
	t.Run("blocked", func(t *testing.T) { t.Fatal("watchdog: a call is blocked") })
}
func TestEx1_4_Serve(t *testing.T)     { t.Fatal("not yet") }
func TestEx1_5_Deadlines(t *testing.T) { t.Fatal("not yet") }
func TestEx1_6_Close(t *testing.T)     { t.Fatal("not yet") }
`

// TestSubtestFailureIsShown: next and status keep every line of a graded
// test's subtests, and name the cause a subtest's output shows.
func TestSubtestFailureIsShown(t *testing.T) {
	root := fixture(t, solvedOne)
	if err := os.WriteFile(filepath.Join(root, "chapters/01/ex_test.go"), []byte(subtestTests), 0o644); err != nil {
		t.Fatal(err)
	}
	out, log, err := student(t, root, "next")
	if err != nil {
		t.Fatalf("next: %v\n%s", err, log)
	}
	mustContain(t, "next after a failure in a subtest", out,
		"next: 1.2", "Last run: failed", "sent Two(); want 2; got 0 (exercise 1.2)", "--- FAIL: TestEx1_2_WriteFrame/two")
	c, err := openCourse(root)
	if err != nil {
		t.Fatal(err)
	}
	res := c.loadResults("01").Results
	if !res["1.1"].Pass {
		t.Errorf("1.1, which passes with a skipped subtest: %+v; want pass", res["1.1"])
	}
	if r := res["1.3"]; r.Cause != "timeout" {
		t.Errorf("1.3, whose subtest reports a watchdog: cause %q; want timeout\n%s", r.Cause, strings.Join(r.Output, "\n"))
	}
}

// TestCollectSubtestCauses: a race or a panic reported inside a subtest is
// the exercise's cause, and another test's subtest is not mistaken for it.
func TestCollectSubtestCauses(t *testing.T) {
	events := `{"Action":"run","Test":"TestEx7_4_History"}
{"Action":"output","Test":"TestEx7_4_History/replay","Output":"=== RUN   TestEx7_4_History/replay\n"}
{"Action":"output","Test":"TestEx7_4_History/replay","Output":"WARNING: DATA RACE\n"}
{"Action":"output","Test":"TestEx7_4_History/replay","Output":"    testing.go:1490: race detected during execution of test\n"}
{"Action":"fail","Test":"TestEx7_4_History/replay"}
{"Action":"output","Test":"TestEx7_4_History","Output":"--- FAIL: TestEx7_4_History (1.00s)\n"}
{"Action":"fail","Test":"TestEx7_4_History"}
{"Action":"output","Test":"TestEx7_40_Other/x","Output":"panic: not ours\n"}
{"Action":"output","Test":"TestEx7_5_Panics/x","Output":"panic: boom\n"}
{"Action":"fail","Test":"TestEx7_5_Panics/x"}
{"Action":"fail","Test":"TestEx7_5_Panics"}
`
	got, build := collect(strings.NewReader(events), map[string]string{"TestEx7_4_History": "7.4", "TestEx7_5_Panics": "7.5"})
	if build != nil {
		t.Errorf("build output %q from a run that built", build)
	}
	if r := got["7.4"]; r.Cause != "race" || len(r.Output) != 3 || r.Output[0] != "WARNING: DATA RACE" {
		t.Errorf("7.4 with a race in a subtest: %+v; want cause race and the three lines that are not === markers", r)
	}
	if r := got["7.5"]; r.Cause != "panic" || len(r.Output) != 1 {
		t.Errorf("7.5 with a panic in a subtest: %+v; want cause panic and its one line", r)
	}
}
