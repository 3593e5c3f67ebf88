// Command stockserver runs the chapter 04 pre-threaded stock server.
//
//	go run ./chapters/04/cmd/stockserver [-addr host] [-file stock.txt] [-sync 16s] [-lock tree|stock]
//		[-idle 30s] [-write-timeout 10s] [-procs 0] <port> [workers]
//
// As the original: the port, then optionally the number of workers (default
// 4). Like the original it listens on every interface; -addr 127.0.0.1 keeps
// it on this machine. Talk to it with `nc localhost <port>` (type show, buy 1
// 2, sell 1 2, exit), or load it with `go run ./tools/cmd/loadgen stock …`; stop
// it with Ctrl-C, which writes the stocks back before exiting.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"

	stock "serverlab/chapters/04"
	"serverlab/tools/given/lab"
)

func main() {
	addr, cfg, procs, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stockserver:", err)
		os.Exit(2)
	}
	if procs > 0 {
		runtime.GOMAXPROCS(procs)
	}
	if err := run(addr, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "stockserver:", err)
		os.Exit(1)
	}
}

// parse reads the command line: the flags, then the original's positional
// arguments, <port> [workers]. It returns the address to listen on, and the
// -procs flag.
func parse(args []string, out io.Writer) (addr string, cfg stock.Config, procs int, err error) {
	fs := flag.NewFlagSet("stockserver", flag.ContinueOnError)
	fs.SetOutput(out)
	host := fs.String("addr", "", "the interface to listen on (default: all of them, as the original; 127.0.0.1 for this machine only)")
	file := fs.String("file", "stock.txt", "the stock file")
	syncEvery := fs.Duration("sync", 16*time.Second, "write the stocks back this often while clients are connected")
	lock := fs.String("lock", "stock", "how trades lock: stock (per-stock locks under the tree's read lock) or tree (the tree's write lock)")
	idle := fs.Duration("idle", 30*time.Second, "disconnect a client that sends no whole request for this long (a silent client holds no worker, only a connection)")
	writeTimeout := fs.Duration("write-timeout", 10*time.Second, "disconnect a client that does not take its replies within this")
	fs.IntVar(&procs, "procs", 0, "threads running Go code at once (GOMAXPROCS); 0: one per core. 1 saves the hand-offs between "+
		"threads but caps the server at one core (the lesson's Experiments measure both)")
	fs.Usage = func() {
		fmt.Fprintf(out, "usage: stockserver [flags] <port> [workers]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return "", cfg, 0, err
	}
	cfg = stock.Config{StockPath: *file, SyncInterval: *syncEvery, IdleTimeout: *idle, WriteTimeout: *writeTimeout}
	port, err := parseArgs(fs.Args(), &cfg)
	if err == nil {
		cfg.Granularity, err = granularity(*lock)
	}
	if err == nil && procs < 0 {
		err = fmt.Errorf("-procs: want 0 or more, got %d", procs)
	}
	if err != nil {
		fs.Usage()
		return "", cfg, 0, err
	}
	return net.JoinHostPort(*host, port), cfg, procs, nil
}

// parseArgs reads the original's positional arguments: <port> [workers].
func parseArgs(args []string, cfg *stock.Config) (port string, err error) {
	if len(args) < 1 || len(args) > 2 {
		return "", errors.New("want <port> [workers]")
	}
	if len(args) == 2 {
		if cfg.Workers, err = strconv.Atoi(args[1]); err != nil || cfg.Workers < 1 {
			return "", fmt.Errorf("workers: want a positive number, got %q", args[1])
		}
	}
	return args[0], nil
}

func granularity(s string) (stock.Granularity, error) {
	switch s {
	case "tree":
		return stock.TreeLock, nil
	case "stock":
		return stock.StockLocks, nil
	}
	return 0, fmt.Errorf("-lock: want tree or stock, got %q", s)
}

// run serves until SIGINT or SIGTERM, then closes the server gracefully.
func run(addr string, cfg stock.Config) error {
	srv, err := stock.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return err
	}
	slog.Info("server running", "addr", ln.Addr(), "file", cfg.StockPath)
	return lab.ServeUntilSignal(srv, ln)
}
