package discoverytest

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
)

// defaultTimeout is the chapter's DefaultTimeout: the lesson documents that
// Config.Timeout = 0 (the -timeout flag's "not set") means it.
const defaultTimeout = 2 * time.Second

// checkZeroConfig: a server built with Timeout 0 uses DefaultTimeout. A New
// that tests `Timeout < 0` keeps the zero and gives every connection a
// deadline of now, so each client is dropped before its registration is read
// (the shared check of testkit.ZeroConfig).
func checkZeroConfig(k *testkit.T, impl Impl) {
	k.Helper()
	raw, _ := newServer(k, impl, Config{})
	k.ZeroConfig(raw, func(s *testkit.Server) error {
		if _, err := registerFrom(k, s, "zero", "pw"); err != nil {
			return fmt.Errorf("sent a registration of zero, want %v, got %v", answer("zero", "OK"), err)
		}
		return nil
	}, testkit.ZeroDefault{Field: "Timeout", Default: defaultTimeout,
		Setters: []string{"SetDeadline", "SetReadDeadline", "SetWriteDeadline"}})
}
