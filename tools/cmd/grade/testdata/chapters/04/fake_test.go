package fake

import (
	"testing"

	"serverlab/tests/testkit"
)

// Impl is what the check calls of the chapter's code.
type Impl struct{ Answer func() int }

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx4_1_Fake(t *testing.T) {
	k := testkit.New(t, "4.1")
	if got := impl.Answer(); got != 42 {
		k.Errorf("Answer() = %d, want 42", got)
	}
}
