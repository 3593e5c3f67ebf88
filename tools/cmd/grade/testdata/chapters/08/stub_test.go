package stub

import (
	"testing"

	"serverlab/tests/testkit"
)

// Impl is what the check calls of the chapter's code.
type Impl struct{ Answer func() (int, error) }

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx8_1_Answer(t *testing.T) {
	k := testkit.New(t, "8.1")
	got, err := impl.Answer()
	if err != nil || got != 42 {
		k.Errorf("Answer() = %d, %v; want 42", got, err)
	}
}
