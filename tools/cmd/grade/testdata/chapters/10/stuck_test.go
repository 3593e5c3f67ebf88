package stuck

import (
	"testing"
	"time"

	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx10_1_Stuck(t *testing.T) {
	testkit.WatchdogTimeout = 500 * time.Millisecond // the rubric gives the test 3s
	k := testkit.New(t, "10.1")
	if Wait() != 42 {
		k.Errorf("Wait() != 42")
	}
}
