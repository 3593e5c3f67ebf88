// Command student is the student's side of the course: where you stand, what
// to do next, a hint when you are stuck, a way back to the starter code, and a
// watcher that re-runs a chapter's tests on every save. The Makefile's status,
// next, hint, reset and watch targets run it; so can you:
//
//	go run ./tools/cmd/student status            # points per chapter, and the next exercise
//	go run ./tools/cmd/student next              # the lesson excerpt and TODOs of that exercise
//	go run ./tools/cmd/student hint 3.4          # one more hint: the idea, the pitfall, the API
//	go run ./tools/cmd/student hint              # the same, for the exercise next names
//	go run ./tools/cmd/student reset 3.4         # restore 3.4's stubs (your version is backed up)
//	go run ./tools/cmd/student reset -ch 07 -mode open   # chapter 07's open track: design the server yourself
//	go run ./tools/cmd/student watch -ch 03 -ex 3_4
//	go run ./tools/cmd/student allowed 05        # what chapter 05's code may call (make grade's gate)
//
// Maintainers also build the student release with it (release -o FILE), so
// that it can be made from a git checkout or from an exported tree alike.
//
// Everything here reads the rubric (tools/internal/rubric) and the chapter
// folders; nothing is hard-coded per chapter. Test results are kept in the
// user cache directory, keyed by the content of the files they depend on, so
// that status only re-runs the chapters you changed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

const usage = `usage: go run ./tools/cmd/student <command> [arguments]

commands:
  status              points per chapter, and the next exercise to do
  next                the lesson excerpt and TODOs of the next unsolved exercise
  hint [EX]           one more hint for exercise EX (e.g. 3.4; default: the one next names)
  reset EX            restore exercise EX's stubs from the starter (your version is backed up first)
  reset -ch NN -mode open|guided
                      put a whole chapter on the open track (an empty server, your design) or back
  watch -ch NN [-ex N_M]
                      re-run a chapter's tests (or one exercise's) on every save
  allowed NN          what chapter NN's code may call beyond its own and the ordinary standard library
  fuzz [-time 20s]    run every fuzz target of the course, each for -time (make fuzz)
  release -o FILE     write the student release (the course without solutions/)

Run a command with -h for its flags.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	var uerr usageError
	switch {
	case err == nil:
	case errors.As(err, &uerr):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "student:", err)
		os.Exit(1)
	}
}

// usageError is a mistake in the command line: exit status 2, no "student:"
// prefix, because the message already says what to type.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run dispatches one command; it is main without the process around it, so
// that the tests can call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("%s", usage)
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "the course's folder (default: found from the current directory)")
	race := fs.Bool("race", true, "run the tests with -race (needs cgo and a C compiler; turned off with a note when missing)")

	var exec func(*course) error
	resetMode := new(string) // reset's -mode, once its flags are known
	switch cmd {
	case "status":
		exec = func(c *course) error { return c.status(ctx, stdout) }
	case "next":
		exec = func(c *course) error { return c.next(ctx, stdout, fs.Arg(0)) }
	case "hint":
		exec = func(c *course) error { return c.hint(ctx, stdout, fs.Arg(0)) }
	case "reset":
		ch := fs.String("ch", "", "with -mode: the chapter to switch, 03, 04, …")
		mode := fs.String("mode", "", "open: the chapter's open track (an empty server, the design yours); guided: back to the starter's stubs")
		resetMode = mode
		exec = func(c *course) error {
			if *mode != "" {
				return c.resetTrack(stdout, *ch, *mode)
			}
			return c.reset(stdout, fs.Arg(0))
		}
	case "watch":
		ch := fs.String("ch", "", "the chapter to watch: 01, 02, …")
		ex := fs.String("ex", "", "only this exercise: 3_4 or 3.4")
		poll := fs.Bool("poll", false, "poll for changes instead of using file-system notifications")
		exec = func(c *course) error {
			return c.watch(ctx, watchConfig{Chapter: *ch, Exercise: *ex, Poll: *poll, Out: stdout})
		}
	case "allowed":
		exec = func(c *course) error { return c.allowed(stdout, fs.Arg(0)) }
	case "fuzz":
		d := fs.Duration("time", 20*time.Second, "how long each fuzz target runs")
		exec = func(c *course) error { return c.fuzz(ctx, fuzzConfig{Time: *d, Out: stdout}) }
	case "release":
		out := fs.String("o", "dist/serverlab-student.tar.gz", "the archive to write")
		exec = func(c *course) error { return c.release(stdout, *out) }
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		return usagef("unknown command %q\n\n%s", cmd, usage)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usagef("%v", err)
	}
	switch {
	case cmd == "reset" && *resetMode != "":
		if fs.NArg() != 0 {
			return usagef("usage: go run ./tools/cmd/student reset -ch NN -mode open|guided   (make reset CH=NN MODE=open): a whole chapter, no EX")
		}
	case cmd == "allowed" && fs.NArg() != 1:
		return usagef("usage: go run ./tools/cmd/student allowed NN   (e.g. allowed 05; make allowed CH=05)")
	case cmd == "next" && fs.NArg() > 1:
		return usagef("usage: go run ./tools/cmd/student next [EX|NN]   (e.g. next 7.4, next 07; make next EX=7.4)")
	case cmd == "hint" && fs.NArg() > 1, cmd == "reset" && fs.NArg() != 1:
		return usagef("usage: go run ./tools/cmd/student %s EX   (e.g. %s 3.4; make %s EX=3.4)", cmd, cmd, cmd)
	}
	c, err := openCourse(*root)
	if err != nil {
		return err
	}
	c.race = *race
	c.log = stderr
	return exec(c)
}
