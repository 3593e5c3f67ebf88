package stocktest

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
)

// Chapter 04's documented defaults (Config: IdleTimeout 30s, WriteTimeout
// 10s, Workers 4), which the flags pass as 0 for "not set".
const (
	defaultIdleTimeout  = 30 * time.Second
	defaultWriteTimeout = 10 * time.Second
)

// checkZeroConfig: a server built with a zero Config uses the documented
// defaults. A New that tests `< 0` keeps a zero IdleTimeout or WriteTimeout,
// and every read or write gets a deadline of now (the shared check of
// testkit.ZeroConfig records the deadlines instead of waiting for them).
// Chapter 04 only (impl.Threaded): an event loop has no such fields.
func checkZeroConfig(k *testkit.T, impl Impl) {
	k.Helper()
	if !impl.Threaded {
		return
	}
	raw, err := impl.NewServer(Config{StockPath: writeStocks(k, market), Logger: testkit.Logger()})
	if err != nil {
		k.Fatalf("NewServer(Config{StockPath: …}): %v, want a server with the default configuration", err)
	}
	k.ZeroConfig(raw, func(s *testkit.Server) error {
		c, err := k.TryDial(s)
		if err != nil {
			return err
		}
		defer c.Close()
		if err := c.TryWrite([]byte("show\n"), `"show\n"`); err != nil {
			return err
		}
		if _, err := readRecord(c); err != nil {
			return fmt.Errorf("sent \"show\", want the market's stocks, got %s", testkit.Describe(err))
		}
		return nil
	},
		testkit.ZeroDefault{Field: "IdleTimeout", Default: defaultIdleTimeout, Setters: []string{"SetDeadline", "SetReadDeadline"}},
		testkit.ZeroDefault{Field: "WriteTimeout", Default: defaultWriteTimeout, Setters: []string{"SetWriteDeadline"}})
}
