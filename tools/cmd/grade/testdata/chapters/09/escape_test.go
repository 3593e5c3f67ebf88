package escape

import (
	"os"
	"os/exec"
	"testing"

	"serverlab/tests/testkit"
)

// Impl is what the check calls of the chapter's code.
type Impl struct{ Answer func() int }

func TestMain(m *testing.M) { testkit.Main(m, impl) }

// TestEx9_1_Escape starts a shell that starts, in a new session (its own
// process group), a sleep that outlives everything, then passes. The marker
// in the sleep's argument lets the grader's test look for it.
func TestEx9_1_Escape(t *testing.T) {
	k := testkit.New(t, "9.1")
	marker := os.Getenv("SERVERLAB_ESCAPE_MARKER")
	if marker == "" {
		marker = "86400"
	}
	cmd := exec.Command("sh", "-c", "setsid sleep "+marker+" </dev/null >/dev/null 2>&1 &")
	if err := cmd.Run(); err != nil {
		k.Fatalf("starting the escapee: %v", err)
	}
	if impl.Answer() != 42 {
		k.Errorf("Answer() != 42")
	}
}
