package codec

import (
	"bytes"
	"io"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// Impl is what the checks call of the chapter's code.
type Impl struct {
	ReadFrame func(io.Reader) (wire.Frame, error)
	Shout     func(string) string
}

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx7_1_ReadFrame(t *testing.T) {
	k := testkit.New(t, "7.1")
	var buf bytes.Buffer
	if err := wire.WriteFrame(&buf, wire.Frame{}); err != nil {
		k.Fatalf("WriteFrame: %v", err)
	}
	if _, err := impl.ReadFrame(&buf); err != nil {
		k.Errorf("ReadFrame: %v", err)
	}
}

func TestEx7_2_Shout(t *testing.T) {
	k := testkit.New(t, "7.2")
	if got := impl.Shout("hi"); got != "hi!" {
		k.Errorf("Shout(hi) = %q", got)
	}
}
