package stuck

import (
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// Impl is what the check calls of the chapter's code.
type Impl struct{ Wait func() int }

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx10_1_Stuck(t *testing.T) {
	testkit.WatchdogTimeout = 500 * time.Millisecond // the rubric gives the test 3s
	k := testkit.New(t, "10.1")
	if impl.Wait() != 42 {
		k.Errorf("Wait() != 42")
	}
}
