//go:build unix

package judge

import (
	"bytes"
	"errors"
	"net"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// peerPair is a judge's end and a subject's end on one socket pair, in this
// process.
func peerPair(t *testing.T) (judge, subject *peer) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0) // SOCK_CLOEXEC is not on macOS
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	ends := make([]*peer, 2)
	for i, side := range []string{"j", "s"} {
		f := os.NewFile(uintptr(fds[i]), side)
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		ends[i] = newPeer(newLink(c.(*net.UnixConn)), side)
		go ends[i].loop()
		t.Cleanup(ends[i].link.close)
	}
	return ends[0], ends[1]
}

// TestJudgeRefusesFlood: a subject writing into the judge's writer (cheater4
// a20: WriteFrame writes 1 GiB, 16 MiB a call) is cut off once its calls
// carry maxCallsIn bytes, and a single call past maxCallIn at once: the
// judge keeps no more than that, and the suite's next call fails with the
// reason.
func TestJudgeRefusesFlood(t *testing.T) {
	write := func(subject *peer, h uint64, chunk []byte) error {
		out, err := subject.call(h, "Write", []reflect.Value{reflect.ValueOf(chunk)},
			[]reflect.Type{bytesType}, []reflect.Type{reflect.TypeFor[int](), errorType})
		if err != nil {
			return err
		}
		if e, _ := out[1].Interface().(error); e != nil {
			return e
		}
		return nil
	}
	for _, tc := range []struct {
		name  string
		chunk int
		calls int
	}{
		{"many calls of 4 MiB", 4 << 20, 64},
		{"one call of 17 MiB", 17 << 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judge, subject := peerPair(t)
			var buf bytes.Buffer
			h := judge.export(reflect.ValueOf(&buf))
			chunk := make([]byte, tc.chunk)
			var err error
			for range tc.calls {
				if err = write(subject, h, chunk); err != nil {
					break
				}
			}
			if err == nil {
				t.Fatalf("%d calls of %d bytes into the judge's writer all succeeded (%d bytes kept)", tc.calls, tc.chunk, buf.Len())
			}
			if buf.Len() > maxCallsIn {
				t.Errorf("the judge's writer holds %d bytes, more than maxCallsIn %d", buf.Len(), maxCallsIn)
			}
			<-judge.lost
			_, jerr := judge.call(0, "readLine", []reflect.Value{reflect.ValueOf(uint64(1)), reflect.ValueOf(1)},
				[]reflect.Type{reflect.TypeFor[uint64](), reflect.TypeFor[int]()}, []reflect.Type{bytesType, errorType})
			if !errors.Is(jerr, errLost) || !strings.Contains(jerr.Error(), "at most") {
				t.Errorf("the suite's next call: %v; want errLost with the bound that ended the link", jerr)
			}
		})
	}
}

// TestJudgeBoundsErrors: an error the subject returns is kept with at most
// maxErrText bytes of its text.
func TestJudgeBoundsErrors(t *testing.T) {
	var tab errTable
	tab.init("j")
	err := tab.decode(&errValue{ID: "s1", Text: strings.Repeat("x", 1<<20), Is: make([]string, 4*maxErrIs)})
	if n := len(err.Error()); n > maxErrText+100 {
		t.Errorf("a 1 MiB error text kept as %d bytes (at most %d)", n, maxErrText)
	}
	if n := len(err.(*remoteError).v.Is); n > maxErrIs {
		t.Errorf("%d identities kept (at most %d)", n, maxErrIs)
	}
}

// TestBoundReport: a leak report or goroutine dump past maxReport is cut.
func TestBoundReport(t *testing.T) {
	if got := boundReport("short"); got != "short" {
		t.Errorf("a short report changed: %q", got)
	}
	if got := boundReport(strings.Repeat("g", 8<<20)); len(got) > maxReport+100 || !strings.Contains(got, "cut by the judge") {
		t.Errorf("an 8 MiB report kept as %d bytes", len(got))
	}
}
