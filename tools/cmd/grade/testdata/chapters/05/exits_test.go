package exits

import (
	"testing"

	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx5_1_ExitZero(t *testing.T) {
	k := testkit.New(t, "5.1")
	if Zero() != 42 {
		k.Errorf("Zero() != 42")
	}
}

func TestEx5_2_ExitThree(t *testing.T) {
	k := testkit.New(t, "5.2")
	if Three() != 42 {
		k.Errorf("Three() != 42")
	}
}

func TestEx5_3_Honest(t *testing.T) {
	k := testkit.New(t, "5.3")
	if Honest() != 42 {
		k.Errorf("Honest() != 42")
	}
}
