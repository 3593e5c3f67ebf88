//go:build linux

// Command stockserver runs the chapter 05 stock server: the stock protocol on
// an epoll event loop, one goroutine for every client.
//
//	go run ./chapters/05/cmd/stockserver [-addr host] [-file stock.txt] [-sync 16s] <port>
//
// It takes the same arguments as chapter 04's stockserver, so every tool and
// experiment can run either; the thread-pool settings (a worker count after
// the port, -lock) are accepted and ignored. Like the original it listens on
// every interface; -addr 127.0.0.1 keeps it on this machine. Talk to it with
// `nc localhost <port>` (show, buy 1 2, sell 1 2, exit); stop it with Ctrl-C,
// which writes the stocks back before exiting.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	evloop "serverlab/solutions/05"
	"serverlab/tools/given/lab"
)

func main() {
	addr, cfg, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stockserver:", err)
		os.Exit(2)
	}
	if err := run(addr, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "stockserver:", err)
		os.Exit(1)
	}
}

// parse reads the command line: the flags, then <port> [workers (ignored)].
// It returns the address to listen on.
func parse(args []string, out io.Writer) (addr string, cfg evloop.StockConfig, err error) {
	fs := flag.NewFlagSet("stockserver", flag.ContinueOnError)
	fs.SetOutput(out)
	host := fs.String("addr", "", "the interface to listen on (default: all of them, as the original; 127.0.0.1 for this machine only)")
	file := fs.String("file", "stock.txt", "the stock file")
	syncEvery := fs.Duration("sync", 16*time.Second, "write the stocks back this often while clients are connected")
	fs.String("lock", "stock", "ignored: chapter 04's lock granularity (one goroutine needs no lock)")
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: stockserver [flags] <port> [workers (ignored)]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return "", cfg, err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return "", cfg, errors.New("want <port> [workers]")
	}
	cfg = evloop.StockConfig{StockPath: *file, SyncInterval: *syncEvery}
	return net.JoinHostPort(*host, fs.Arg(0)), cfg, nil
}

// run serves until SIGINT or SIGTERM, then closes the server gracefully.
func run(addr string, cfg evloop.StockConfig) error {
	srv, err := evloop.NewStock(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return err
	}
	slog.Info("stock server running", "addr", ln.Addr(), "file", cfg.StockPath)
	return lab.ServeUntilSignal(srv, ln)
}
