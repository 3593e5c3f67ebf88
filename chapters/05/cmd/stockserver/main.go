//go:build linux

// Command stockserver runs the chapter 05 stock server: the stock protocol on
// an epoll event loop, one goroutine for every client.
//
//	go run ./chapters/05/cmd/stockserver [-file stock.txt] [-sync 16s] <port>
//
// It takes the same arguments as chapter 04's stockserver, so every tool and
// experiment can run either; the thread-pool settings (a worker count after
// the port, -lock) are accepted and ignored. Talk to it with
// `nc localhost <port>` (show, buy 1 2, sell 1 2, exit); stop it with Ctrl-C,
// which writes the stocks back before exiting.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	evloop "serverlab/chapters/05"
	"serverlab/tools/lab"
)

func main() {
	file := flag.String("file", "stock.txt", "the stock file")
	syncEvery := flag.Duration("sync", 16*time.Second, "write the stocks back this often while clients are connected")
	flag.String("lock", "stock", "ignored: chapter 04's lock granularity (one goroutine needs no lock)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: stockserver [flags] <port> [workers (ignored)]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 || flag.NArg() > 2 {
		flag.Usage()
		os.Exit(2)
	}
	cfg := evloop.StockConfig{StockPath: *file, SyncInterval: *syncEvery}
	if err := run(":"+flag.Arg(0), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "stockserver:", err)
		os.Exit(1)
	}
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
