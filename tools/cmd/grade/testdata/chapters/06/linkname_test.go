package linkname

import (
	"testing"

	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx6_1_Linkname(t *testing.T) {
	k := testkit.New(t, "6.1")
	if len(Secret()) != 0 {
		k.Logf("read the secret")
	}
}
