// Command bench runs the course's experiments: servers measured against
// each other (and against the originals, with -peers) on the experiment
// runner (package serverlab/tools/internal/runner), each writing results.csv,
// results.md and PNG plots into a docs/ folder.
//
//	go run ./tools/cmd/bench                      list the experiments
//	go run ./tools/cmd/bench chat -h              one experiment's flags
//	go run ./tools/cmd/bench chat -peers /path/to/peers -out docs/bench-chat
//
// An experiment is one file of this package that registers itself in an
// init function (see register), so that adding one means adding a file.
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
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"serverlab/tools/internal/runner"
)

// experiment is one command of bench.
type experiment struct {
	name    string // the first argument, e.g. "chat"
	summary string // one line for the list
	// run parses the experiment's flags from args (see newFlags) and runs it.
	run func(ctx context.Context, args []string) error
}

var experiments = map[string]experiment{}

// register adds an experiment; each experiment's file calls it from init.
// Two experiments with one name are a programming error.
func register(e experiment) {
	if _, dup := experiments[e.name]; dup {
		panic("bench: experiment " + e.name + " registered twice")
	}
	experiments[e.name] = e
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the experiment args[0] and returns the exit status: 0 on success
// or help, 1 if the experiment failed, 2 on a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	e, ok := experiments[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "bench: unknown experiment %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	switch err := e.run(ctx, args[1:]); {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		return 2
	default:
		fmt.Fprintf(stderr, "bench %s: %v\n", e.name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: go run ./tools/cmd/bench <experiment> [flags]\n\nexperiments:\n")
	for _, name := range slices.Sorted(maps.Keys(experiments)) {
		fmt.Fprintf(w, "  %-10s %s\n", name, experiments[name].summary)
	}
	fmt.Fprintf(w, "\nRun \"go run ./tools/cmd/bench <experiment> -h\" for its flags.\n")
}

// usageError is a command-line mistake the flag set has already reported.
type usageError struct{ error }

// flags are the flags every experiment has.
type flags struct {
	*flag.FlagSet
	name   string
	out    string // the folder for results.csv, results.md and the plots
	rounds int    // trials per server and cell, interleaved
	peers  string // where the originals are built ("" = compare the course's servers only)
}

// newFlags returns an experiment's flag set with the common flags.
func newFlags(name, defaultOut string, defaultRounds int) *flags {
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), name: name}
	f.StringVar(&f.out, "out", defaultOut, "`folder` for results.csv, results.md and the plots")
	f.IntVar(&f.rounds, "rounds", defaultRounds, "trials per server and cell, run alternately (A B, B A, …); the tables show medians")
	f.StringVar(&f.peers, "peers", os.Getenv("PEERS"), "`folder` where the originals are built, in the layout of docs/interop.md; default $PEERS; empty: the course's servers only")
	return f
}

// parse parses args; a mistake is a usageError.
func (f *flags) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if f.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q", f.Arg(0))
		fmt.Fprintln(f.Output(), err)
		return usageError{err}
	}
	if f.rounds < 1 {
		return usageError{errors.New("-rounds must be at least 1")}
	}
	return nil
}

// fail reports a command-line mistake the flag package cannot see (a bad
// value of a flag of the experiment's own) and returns it as a usageError,
// which exits 2.
func (f *flags) fail(err error) error {
	fmt.Fprintf(f.Output(), "bench %s: %v\n", f.name, err)
	return usageError{err}
}

// peer returns the path of an original under -peers, or "" (with a note on
// stderr) if -peers is empty or the program is not built there.
func (f *flags) peer(rel string) string {
	if f.peers == "" {
		return ""
	}
	path := filepath.Join(f.peers, rel)
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(os.Stderr, "bench %s: leaving out %s: %v (docs/interop.md lists where each original's programs go)\n", f.name, rel, err)
		return ""
	}
	return path
}

// command is the command line that reproduces this run, for results.md.
func (f *flags) command() string {
	var b strings.Builder
	if f.peers != "" {
		b.WriteString("PEERS=" + f.peers + " ")
	}
	b.WriteString("go run ./tools/cmd/bench " + f.name)
	f.Visit(func(fl *flag.Flag) {
		if fl.Name != "peers" {
			fmt.Fprintf(&b, " -%s %s", fl.Name, fl.Value)
		}
	})
	return b.String()
}

// build compiles the servers that are Go packages once, for several
// experiments; cleanup removes the binaries.
func build(ctx context.Context, servers []runner.Server) (built []runner.Server, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "bench-bin-")
	if err != nil {
		return nil, nil, err
	}
	built, err = runner.Build(ctx, dir, servers, os.Stderr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return built, func() { os.RemoveAll(dir) }, nil
}

// tree is where the course's servers are: "solutions" in the maintainers'
// tree, "chapters" (the student's own code) in the student release.
func tree() string {
	if _, err := os.Stat("solutions"); err == nil {
		return "solutions"
	}
	return "chapters"
}
