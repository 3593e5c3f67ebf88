package fake

import (
	"testing"

	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx4_1_Fake(t *testing.T) {
	k := testkit.New(t, "4.1")
	if got := Answer(); got != 42 {
		k.Errorf("Answer() = %d, want 42", got)
	}
}
