// Command jobserver runs the chapter 03 job server. Like the original it takes
// the port, the number of workers and the queue capacity as arguments:
//
//	go run ./solutions/03/cmd/jobserver 9000 4 1024
//	go run ./solutions/03/cmd/jobserver -addr :9000 -workers 4 -queue 1024
//
// Try it with printf 'PRIME 10000019\nHASH hello world\n' | nc 127.0.0.1 9000,
// drive it with go run ./tools/cmd/loadgen jobs, and stop it with Ctrl-C: it
// finishes and answers the queued jobs, then prints its statistics.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"

	jobserver "serverlab/solutions/03"
	"serverlab/tools/given/lab"
)

func main() {
	addr := flag.String("addr", ":9000", "address to listen on")
	workers := flag.Int("workers", runtime.NumCPU(), "number of worker goroutines")
	queueCap := flag.Int("queue", 1024, "capacity of the job queue")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: jobserver [flags] [<port> <workers> <queue_cap>]\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	if err := positional(flag.Args(), addr, workers, queueCap); err != nil {
		fmt.Fprintln(os.Stderr, "jobserver:", err)
		flag.Usage()
		os.Exit(2)
	}
	cfg := jobserver.Config{Workers: *workers, QueueCap: *queueCap}
	if err := profiled(*cpuProfile, func() error { return run(*addr, cfg) }); err != nil {
		fmt.Fprintln(os.Stderr, "jobserver:", err)
		os.Exit(1)
	}
}

// positional applies the original's arguments, <port> <workers> <queue_cap>,
// each optional from the right, over the flags.
func positional(args []string, addr *string, workers, queueCap *int) error {
	if len(args) > 3 {
		return fmt.Errorf("too many arguments: %q", args)
	}
	targets := []*int{nil, workers, queueCap}
	for i, arg := range args {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return fmt.Errorf("argument %d (%q) must be a positive integer", i+1, arg)
		}
		if i == 0 {
			*addr = ":" + arg
			continue
		}
		*targets[i] = n
	}
	return nil
}

// profiled runs f, recording a CPU profile into the file at path unless path
// is empty.
func profiled(path string, f func() error) error {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return err
	}
	runErr := f()
	pprof.StopCPUProfile()
	return errors.Join(runErr, out.Close())
}

// run serves until SIGINT or SIGTERM, then closes the server gracefully.
func run(addr string, cfg jobserver.Config) error {
	srv, err := jobserver.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return err
	}
	slog.Info("job server listening", "addr", ln.Addr().String(), "workers", cfg.Workers, "queue", cfg.QueueCap)
	return lab.ServeUntilSignal(srv, ln)
}
