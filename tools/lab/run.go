package lab

import (
	"context"
	"errors"
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
func ServeUntilSignal(srv Server, ln net.Listener) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	closed := make(chan error, 1)
	go func() {
		<-ctx.Done()
		slog.Info("shutting down")
		closed <- srv.Close()
	}()
	err := srv.Serve(ln)
	stop() // Serve failed by itself, or was closed: either way, close and wait
	closeErr := <-closed
	if !errors.Is(err, ErrServerClosed) {
		return err
	}
	return closeErr
}
