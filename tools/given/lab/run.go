package lab

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
)

// ServeUntilSignal is the end of every chapter's main: it runs srv on ln
// until SIGINT (Ctrl-C) or SIGTERM, then closes srv gracefully, and returns
// only when Close has finished — so that work Close still does, such as the
// stock server's final write-back, is not cut short by the process exiting.
// It returns nil after a clean shutdown, or the error that stopped Serve.
//
// A graceful shutdown can take long (a job server answers every queued job
// first), so a second signal while Close runs does not wait: it exits the
// process at once, with status 1 and a message on stderr. An operator's
// second Ctrl-C always works.
func ServeUntilSignal(srv Server, ln net.Listener) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return serveUntil(srv, ln, sigs, func(sig os.Signal) {
		fmt.Fprintf(os.Stderr, "%v again during shutdown: exiting at once, without waiting for it\n", sig)
		os.Exit(1)
	})
}

// serveUntil is ServeUntilSignal with the signals and the forced exit handed
// in, for tests.
func serveUntil(srv Server, ln net.Listener, sigs <-chan os.Signal, forceExit func(os.Signal)) error {
	served := make(chan struct{})
	closed := make(chan error, 1)
	go func() {
		select {
		case sig := <-sigs:
			slog.Info("shutting down (a second signal exits at once)", "signal", sig)
		case <-served: // Serve failed by itself: close and wait all the same
		}
		done := make(chan error, 1)
		go func() { done <- srv.Close() }()
		for {
			select {
			case err := <-done:
				closed <- err
				return
			case sig := <-sigs:
				forceExit(sig)
			}
		}
	}()
	err := srv.Serve(ln)
	close(served)
	closeErr := <-closed
	if !errors.Is(err, ErrServerClosed) {
		return err
	}
	return closeErr
}
