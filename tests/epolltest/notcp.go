//go:build linux

package epolltest

import (
	"errors"
	"net"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// plainListener is a listener with no socket the loop can take: only the
// net.Listener methods of the TCP listener it wraps.
type plainListener struct{ net.Listener }

// checkServeRefusesNoSocket: Serve needs a TCP listener's descriptor. Given a
// listener without one, it must return an error, not panic: setting up
// failed, and teardown then closes the little that was opened, with no
// listener recorded yet.
func checkServeRefusesNoSocket(k *testkit.T, impl Impl) {
	k.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	k.Cleanup(func() { inner.Close() })
	srv, err := impl.NewEcho(EchoConfig{})
	if err != nil {
		k.Fatalf("NewEcho: %v", err)
	}
	k.Cleanup(func() { srv.Close() })
	served := make(chan error, 1)
	go func() { served <- srv.Serve(plainListener{inner}) }()
	select {
	case err := <-served:
		if err == nil || errors.Is(err, lab.ErrServerClosed) {
			k.Fatalf("Serve was given a listener that is not a TCP listener (no descriptor to accept on)\n"+
				"  want: an error saying so\n   got: %v\nhint: Serve fails when setup fails", err)
		}
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("Serve was given a listener that is not a TCP listener (no descriptor to accept on), and had "+
			"not returned %v later: it must return an error at once (setup fails; teardown closes what it "+
			"opened, and there is no listener recorded to close yet)", testkit.IOTimeout)
	}
}
