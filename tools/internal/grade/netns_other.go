//go:build unix && !linux

package grade

// Network namespaces are Linux's (netns_linux.go): elsewhere judge and
// subject share the machine's network, and the report says so.
type netns struct{}

func netnsAvailable() bool { return false }

func newNetns() (*netns, error) { return nil, nil }

// do calls start where the caller is.
func (*netns) do(start func() error) error { return start() }

func (*netns) close() {}
