// Command monitor samples a process's CPU%, RSS, PSS and thread count from
// /proc at a fixed interval and writes them as CSV, like the chat write-up's
// monitor_server.py. Either attach to a running process:
//
//	go run ./tools/cmd/monitor -pid 1234 -interval 500ms -duration 30s -o server.csv
//
// or start a command and sample it until it exits (or -duration passes, or
// Ctrl-C; then it is sent SIGTERM):
//
//	go run ./tools/cmd/monitor -interval 500ms -o server.csv -- ./server -addr :7000
//
// A summary (samples, mean and max CPU%, max RSS and PSS) goes to stderr. The
// sampling itself is package serverlab/tools/internal/procstat. Linux only.
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"serverlab/tools/internal/procstat"
)

// stopGrace is how long a command has to exit after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type config struct {
	pid      int
	interval time.Duration
	duration time.Duration
	output   string
	command  []string
}

// run is the whole command, returning the exit status: 0 when sampling
// worked, 1 on failure (including a command that failed on its own), 2 on a
// usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return 2
	}
	if err := monitor(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "monitor:", err)
		return 1
	}
	return 0
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("monitor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: monitor -pid N [flags]
       monitor [flags] -- command [args]

Samples a process's CPU%, RSS, PSS and threads from /proc into CSV.

flags:
`)
		fs.PrintDefaults()
	}
	fs.IntVar(&cfg.pid, "pid", 0, "sample this running process")
	fs.DurationVar(&cfg.interval, "interval", 500*time.Millisecond, "time between samples")
	fs.DurationVar(&cfg.duration, "duration", 0, "stop after this long (and stop the command); 0 = until the process exits or Ctrl-C")
	fs.StringVar(&cfg.output, "o", "", "write the CSV to `file` instead of stdout")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.command = fs.Args()
	var err error
	switch {
	case (cfg.pid > 0) == (len(cfg.command) > 0):
		err = errors.New("give either -pid or a command after --, not both")
	case cfg.pid < 0:
		err = fmt.Errorf("-pid %d: not a process id", cfg.pid)
	case cfg.interval <= 0:
		err = fmt.Errorf("-interval %v: must be positive", cfg.interval)
	case cfg.duration < 0:
		err = fmt.Errorf("-duration %v: must not be negative", cfg.duration)
	}
	if err != nil {
		fmt.Fprintln(stderr, "monitor:", err)
		fs.Usage()
	}
	return cfg, err
}

// monitor samples the process cfg names into the CSV output and prints a
// summary.
func monitor(ctx context.Context, cfg config, stdout, stderr io.Writer) (err error) {
	out, commandOut := stdout, stderr // keep the command's output out of the CSV
	if cfg.output != "" {
		f, err := os.Create(cfg.output)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		out, commandOut = f, stdout
	}
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
		defer cancel()
	}

	w := csv.NewWriter(out)
	if err := w.Write(procstat.CSVHeader()); err != nil {
		return err
	}
	var summary procstat.Summary
	emit := func(s procstat.Sample) error {
		summary.Add(s)
		// Flush every row: a run cut short (or watched with tail -f) keeps
		// everything sampled so far.
		w.Write(s.CSVRecord())
		w.Flush()
		return w.Error()
	}
	w.Flush()

	what := fmt.Sprintf("pid %d", cfg.pid)
	if len(cfg.command) > 0 {
		what = fmt.Sprintf("%q", cfg.command)
		err = sampleCommand(ctx, cfg.command, cfg.interval, commandOut, stderr, emit)
	} else {
		err = procstat.Run(ctx, cfg.pid, cfg.interval, emit)
	}
	fmt.Fprintf(stderr, "monitor: %s: %d samples, cpu mean %.1f%% max %.1f%%, rss max %d KiB, pss max %s, threads max %d\n",
		what, summary.Samples, summary.CPUMean, summary.CPUMax, summary.RSSMaxKiB, pssText(summary.PSSMaxKiB), summary.ThreadsMax)
	return err
}

func pssText(kib int64) string {
	if kib < 0 {
		return "unreadable"
	}
	return fmt.Sprintf("%d KiB", kib)
}

// sampleCommand starts argv and samples it until it exits or ctx is done; in
// the second case it stops the command (SIGTERM, then SIGKILL after
// stopGrace) and waits for it. A command that exits by itself with an error
// makes the run fail; one that we stopped does not.
func sampleCommand(ctx context.Context, argv []string, interval time.Duration, stdout, stderr io.Writer,
	emit func(procstat.Sample) error) error {
	// The command gets its own context so that we, not ctx, decide when to
	// stop it, and so know whether it exited by itself.
	cmdCtx, stopCommand := context.WithCancel(context.Background())
	defer stopCommand()
	cmd := exec.CommandContext(cmdCtx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		return err
	}

	var wg sync.WaitGroup
	exited := make(chan struct{})
	var waitErr error
	wg.Go(func() {
		waitErr = cmd.Wait()
		close(exited)
	})
	sampleCtx, stopSampling := context.WithCancel(ctx)
	wg.Go(func() {
		select {
		case <-exited:
			stopSampling()
		case <-sampleCtx.Done():
		}
	})

	err := procstat.Run(sampleCtx, cmd.Process.Pid, interval, emit)
	if errors.Is(err, procstat.ErrExited) {
		err = nil // it exited before the first snapshot
	}
	byItself := err == nil && ctx.Err() == nil // Run saw the process exit
	if !byItself {
		stopCommand()
	}
	<-exited
	stopSampling()
	wg.Wait()
	if byItself && waitErr != nil {
		return fmt.Errorf("%s: %w", argv[0], waitErr)
	}
	return err
}
