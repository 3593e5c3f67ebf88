package stub

import (
	"testing"

	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx8_1_Answer(t *testing.T) {
	k := testkit.New(t, "8.1")
	got, err := Answer()
	if err != nil || got != 42 {
		k.Errorf("Answer() = %d, %v; want 42", got, err)
	}
}
