package codec

import (
	"bytes"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx7_1_ReadFrame(t *testing.T) {
	k := testkit.New(t, "7.1")
	var buf bytes.Buffer
	if err := wire.WriteFrame(&buf, wire.Frame{}); err != nil {
		k.Fatalf("WriteFrame: %v", err)
	}
	if _, err := ReadFrame(&buf); err != nil {
		k.Errorf("ReadFrame: %v", err)
	}
}

func TestEx7_2_Shout(t *testing.T) {
	k := testkit.New(t, "7.2")
	if got := Shout("hi"); got != "hi!" {
		k.Errorf("Shout(hi) = %q", got)
	}
}
