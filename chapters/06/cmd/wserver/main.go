// Command wserver runs the chapter 06 web server, with the original's flags
// and defaults.
//
//	go run ./chapters/06/cmd/wserver -d www -p 10000 -t 8 -b 64 -s SFF
//	go run ./chapters/06/cmd/wserver -addr 127.0.0.1 -d www   (this machine only)
//
// Fetch a page with curl or a browser (http://localhost:10000/), run a CGI
// program (http://localhost:10000/spin.cgi?1), and stop the server with
// Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	web "serverlab/chapters/06"
	"serverlab/tools/given/lab"
)

func main() {
	var cfg web.Config
	flag.StringVar(&cfg.Root, "d", ".", "document root: the folder to serve")
	host := flag.String("addr", "", "address (interface) to listen on, e.g. 127.0.0.1 (default: all, as the original)")
	port := flag.Int("p", 10000, "port to listen on")
	flag.IntVar(&cfg.Threads, "t", 1, "worker threads")
	flag.IntVar(&cfg.Buffers, "b", 1, "buffer slots between the master and the workers")
	policy := flag.String("s", "FIFO", "scheduling policy: FIFO or SFF")
	flag.Float64Var(&cfg.AgeRate, "age", 0, "SFF ageing: bytes of size forgiven per second waited (0: pure SFF)")
	flag.DurationVar(&cfg.CGITimeout, "cgi-timeout", 30*time.Second, "time limit for a CGI program")
	flag.DurationVar(&cfg.ReadTimeout, "read-timeout", 3*time.Second, "time limit for a whole request head (408 after it)")
	verbose := flag.Bool("v", false, "log every request")
	flag.Parse()

	var err error
	if cfg.Policy, err = web.ParsePolicy(*policy); err != nil {
		fmt.Fprintln(os.Stderr, "wserver:", err)
		os.Exit(2)
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if err := run(net.JoinHostPort(*host, strconv.Itoa(*port)), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "wserver:", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then closes the server.
func run(addr string, cfg web.Config) error {
	srv, err := web.New(cfg)
	if err != nil {
		return err
	}
	// KeepAlive -1: one request per connection, so TCP keep-alive probes are
	// useless, and not enabling them saves four setsockopt calls per accept.
	lc := net.ListenConfig{KeepAlive: -1, Control: deferAccept}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		srv.Close()
		return err
	}
	return lab.ServeUntilSignal(srv, ln)
}

// deferSecs is how long the kernel keeps a connection that has sent nothing
// before handing it to Accept anyway.
const deferSecs = 10

// deferAccept asks the kernel (Linux: TCP_DEFER_ACCEPT) to complete an accept
// only once the client's first bytes have arrived, as nginx's "listen …
// deferred" does. A worker then finds the whole request waiting: its first
// read succeeds, instead of failing with EAGAIN and parking the goroutine in
// the network poller until the request comes. It is also a defence: a
// connection that sends nothing stays in the kernel for deferSecs, holding
// neither a descriptor nor a slot nor a worker, while connections that carry
// a request are accepted at once — an idle flood past the descriptor limit
// no longer starves them (measured in the lesson: a well-behaved client's p99
// was 2–4 s with 1 s here, under 250 ms with 10 s). After that the connection is
// accepted and answered as usual (its read deadline then runs). Where the
// option does not exist, accept works as before.
func deferAccept(network, address string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = setDeferAccept(int(fd), deferSecs) // best effort: an optimisation and a defence, not a guarantee
	})
}
