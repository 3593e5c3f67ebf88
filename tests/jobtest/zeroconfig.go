package jobtest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// defaultWriteTimeout is Config.WriteTimeout's documented default (the
// lesson: "WriteTimeout bounds each write to a client (default 10s)").
const defaultWriteTimeout = 10 * time.Second

// checkZeroConfig: a server built with a zero Config uses the documented
// defaults (Workers = the number of CPUs, QueueCap 1024, WriteTimeout 10s,
// MaxPending 64 KiB), which the -workers, -queue, … flags pass as 0. A New
// that tests `< 0` keeps the zero: with Workers 0 no job ever runs, and with
// WriteTimeout 0 every write gets a deadline of now, so the first answer
// that does not fit in one write drops the client (the shared check of
// testkit.ZeroConfig records the deadlines instead of waiting for them).
func checkZeroConfig(k *testkit.T, impl Impl) {
	k.Helper()
	requireQueueAndPool(k, impl)
	raw, err := impl.NewServer(Config{})
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the server needs an earlier exercise: %v", err)
	}
	if err != nil {
		k.Fatalf("NewServer(Config{}): %v, want a server with the default configuration", err)
	}
	k.ZeroConfig(raw, func(s *testkit.Server) error {
		c, err := k.TryDial(s)
		if err != nil {
			return err
		}
		defer c.Close()
		const line = "HASH zero"
		if err := c.TryWrite([]byte(line+"\n"), "the request "+line); err != nil {
			return err
		}
		got, err := c.TryReadLine()
		if err != nil {
			return fmt.Errorf("sent %q, want an answer \"OK 1 …\" within %v, got %s (Workers = 0 kept as zero "+
				"starts no worker)", line, testkit.IOTimeout, testkit.Describe(err))
		}
		if !strings.HasPrefix(got, "OK 1 ") {
			return fmt.Errorf("sent %q, want \"OK 1 …\", got %q", line, got)
		}
		return nil
	}, testkit.ZeroDefault{Field: "WriteTimeout", Default: defaultWriteTimeout,
		Setters: []string{"SetDeadline", "SetWriteDeadline"}})
}
