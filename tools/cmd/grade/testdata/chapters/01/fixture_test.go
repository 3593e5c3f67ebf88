package fixture

import (
	"sync"
	"testing"

	"go.uber.org/goleak"

	"serverlab/tests/testkit"
)

// Impl is what the checks call of the chapter's code (impl_test.go,
// judge_test.go).
type Impl struct {
	Shout   func(string) string
	Whisper func(string) (string, error)
	Race    func() int
}

// TestMain reports goroutines left behind once the tests have passed, with
// goleak's own message (as the course's wiring does).
func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx1_1_Pass(t *testing.T) {
	testkit.New(t, "1.1")
	if got, want := impl.Shout("hi"), "hi!"; got != want {
		t.Errorf("Shout(%q) = %q, want %q", "hi", got, want)
	}
}

func TestEx1_2_Fail(t *testing.T) {
	testkit.New(t, "1.2")
	got, err := impl.Whisper("HI")
	if err != nil {
		t.Fatalf("Whisper(%q): %v", "HI", err)
	}
	if got != "hi" {
		t.Errorf("Whisper(%q) = %q, want %q", "HI", got, "hi")
	}
}

// A goroutine the test started (a server's, say) panics: the process dies
// with no verdict for the test.
func TestEx1_3_ServerPanic(t *testing.T) {
	var wg sync.WaitGroup
	wg.Go(func() { panic("server goroutine: nil map") })
	wg.Wait()
}

func TestEx1_4_Hang(t *testing.T) {
	<-make(chan struct{})
}

// The leak check testkit registers, reduced to its message.
func TestEx1_5_Leak(t *testing.T) {
	t.Cleanup(func() {
		if err := goleak.Find(); err != nil {
			t.Errorf("serverlab: leak: %v", err)
		}
	})
	block := make(chan struct{})
	go func() { <-block }()
}

// The test passes, and goleak.VerifyTestMain finds the goroutine afterwards.
func TestEx1_6_LeakAfterPass(t *testing.T) {
	block := make(chan struct{})
	go func() { <-block }()
}

// The chapter's code races: the race detector ends the subject.
func TestEx1_7_Race(t *testing.T) {
	t.Logf("n = %d", impl.Race())
}

func TestEx1_8_Panic(t *testing.T) {
	var m map[string]int
	m["boom"]++
}

// What testkit's watchdog reports when a check hangs.
func TestEx1_9_Watchdog(t *testing.T) {
	t.Fatal("serverlab: watchdog: check 1.9 still running after 30s; closed its connections")
}

func TestEx1_10_Skip(t *testing.T) {
	t.Skip("needs a network this machine does not have")
}
