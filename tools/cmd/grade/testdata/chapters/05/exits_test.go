package exits

import (
	"testing"

	"serverlab/tests/testkit"
)

// Impl is what the checks call of the chapter's code.
type Impl struct{ Zero, Three, Honest func() int }

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx5_1_ExitZero(t *testing.T) {
	k := testkit.New(t, "5.1")
	if impl.Zero() != 42 {
		k.Errorf("Zero() != 42")
	}
}

func TestEx5_2_ExitThree(t *testing.T) {
	k := testkit.New(t, "5.2")
	if impl.Three() != 42 {
		k.Errorf("Three() != 42")
	}
}

func TestEx5_3_Honest(t *testing.T) {
	k := testkit.New(t, "5.3")
	if impl.Honest() != 42 {
		k.Errorf("Honest() != 42")
	}
}
