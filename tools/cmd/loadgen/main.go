// Command loadgen drives the course's servers with many clients and reports
// throughput, latency percentiles and errors, as text, CSV or JSON.
//
//	go run ./tools/cmd/loadgen -h                 list the modes (one per protocol)
//	go run ./tools/cmd/loadgen <mode> -h          the flags of one mode
//	go run ./tools/cmd/loadgen tcp-echo -addr 127.0.0.1:7000 -clients 50 -requests 1000
//	go run ./tools/cmd/loadgen tcp-echo -rate 5000 -duration 30s -csv results.csv -label server=goroutines
//
// Without -rate the load is closed-loop (each client sends its next request
// when the previous reply arrives); with -rate it is open-loop at that many
// requests per second, timed from each request's intended start. See package
// serverlab/tools/internal/load.
//
// A mode is one file in this package that registers itself in an init
// function; see register.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// mode is one protocol the load generator speaks.
type mode struct {
	name    string // the first argument that selects it, e.g. "tcp-echo"
	summary string // one line for the mode list
	// run parses the mode's flags from args and runs it. Most modes define
	// their flags with newFlagSet and addCommonFlags, build a load.NewClient
	// and hand it to commonFlags.run.
	run func(ctx context.Context, env *env, args []string) error
}

// modes holds every registered mode by name.
var modes = map[string]mode{}

// register adds a mode; each mode's file calls it from an init function, so
// that adding a protocol means adding a file and nothing else. Registering
// two modes with one name is a programming error and panics at start-up.
func register(m mode) {
	if _, dup := modes[m.name]; dup {
		panic("loadgen: mode " + m.name + " registered twice")
	}
	modes[m.name] = m
}

// env is what a mode's run may use of the process, so tests can run modes
// in-process with buffers.
type env struct {
	stdout, stderr io.Writer
	// terminal reports whether stderr is a terminal, where the per-second
	// progress lines go (unless -quiet).
	terminal bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr, terminal: isTerminal(os.Stderr)}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run runs the mode named by args[0] and returns the exit status: 0 on
// success or help, 1 when the run failed, 2 on a usage error.
func run(ctx context.Context, env *env, args []string) int {
	if len(args) == 0 {
		usage(env.stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(env.stdout)
		return 0
	}
	m, ok := modes[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "loadgen: unknown mode %q\n\n", args[0])
		usage(env.stderr)
		return 2
	}
	err := m.run(ctx, env, args[1:])
	var usageErr usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usageErr):
		return 2 // the flag set has already said what was wrong
	default:
		fmt.Fprintf(env.stderr, "loadgen %s: %v\n", m.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: loadgen <mode> [flags]

Drives a server with many clients and reports throughput, latency percentiles
(p50 p95 p99 p99.9 max) and errors by kind.

modes:
`)
	for _, name := range slices.Sorted(maps.Keys(modes)) {
		fmt.Fprintf(w, "  %-12s %s\n", name, modes[name].summary)
	}
	fmt.Fprint(w, `
Run "loadgen <mode> -h" for a mode's flags.
`)
}

// usageError marks a command-line mistake that has already been reported.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// newFlagSet returns the flag set of mode name, writing its usage to stderr.
func newFlagSet(env *env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadgen %s [flags]\n\n%s\n\nflags:\n", name, modes[name].summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs and rejects leftover arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q", fs.Arg(0))
		fmt.Fprintln(fs.Output(), err)
		fs.Usage()
		return usageError{err}
	}
	return nil
}

// isTerminal reports whether f is a terminal (a character device): progress
// lines are for people watching, not for log files.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
