package testkit

import "testing"

// The record's MAC is fixed by this vector; tools/cmd/grade checks the same one,
// so the harness and the grader cannot drift apart.
func TestRecordMAC(t *testing.T) {
	const want = "0f084f1a2b43dac98889b0a24b798109c3549e7b98ba9c43c84540edc9d932ab"
	if got := recordMAC([]byte("0123456789abcdef"), "TestEx1_1_ReadFrame"); got != want {
		t.Errorf("recordMAC = %s, want %s", got, want)
	}
}

// Without the grader's secret (plain go test), New notes checks but Main
// writes no record.
func TestNoRecordWithoutGrader(t *testing.T) {
	if record.out != nil || record.secret != nil {
		t.Fatalf("a record channel is open outside the grader")
	}
	writeRecords(0) // must not panic or write anywhere
}

// The watchdog's list of stuck goroutines shows only code under chapters/
// or solutions/ (not tests), so a goroutine of this package's own is not in
// it.
func TestStuckGoroutinesShowsOnlyStudentCode(t *testing.T) {
	block := make(chan struct{})
	done := make(chan struct{})
	go func() { <-block; close(done) }()
	if s := stuckGoroutines(); s != "" {
		t.Errorf("stuckGoroutines() = %q, want nothing: no goroutine is in a chapter's code", s)
	}
	close(block)
	<-done
}
