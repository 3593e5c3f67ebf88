package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBusyNoteQuotesUptime: the busy note's load is the figure uptime
// shows. student3's first make status said "load 21" beside an uptime of
// 7.65 (status1.out, status1.uptime): the note quoted the tasks runnable at
// that instant as the load. Here /proc/loadavg as it was then.
func TestBusyNoteQuotesUptime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loadavg")
	if err := os.WriteFile(path, []byte("7.65 6.97 8.52 22/611 12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := readLoad(path)
	l.CPUs = 2
	for _, note := range []string{busyLine(l, 133*time.Second), busyBefore(l, "they")} {
		for _, want := range []string{"load average 7.7 on 2 CPUs, as uptime shows it", "21 tasks want a CPU right now"} {
			if !strings.Contains(note, want) {
				t.Errorf("busy note %q lacks %q", note, want)
			}
		}
		if strings.Contains(note, "load 21") {
			t.Errorf("busy note %q quotes the runnable tasks as the load", note)
		}
	}
	if got := busyBefore(machineLoad{Avg1: 0.5, Runnable: 1, CPUs: 2}, "they"); got != "" {
		t.Errorf("a quiet machine: got %q before the tests, want nothing", got)
	}
	if got := busyBefore(l, "they"); !strings.Contains(got, "go test prints nothing until they end") {
		t.Errorf("the note before a run on a busy machine, %q, does not say why nothing shows", got)
	}
}
