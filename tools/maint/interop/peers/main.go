//go:build linux

// Command peers is the course's two-way interop check (`make interop
// PEERS=<folder>`): the originals' own clients and load testers drive the
// course's reference servers, and the course's tools (tools/cmd/chat, every
// loadgen mode, the chapter 06 CGI programs) drive the originals. It prints
// one row per case: name, pass / FAIL / skip, and the line of evidence.
//
//	go run ./tools/maint/interop/peers                       # only the Debian tools (curl, wrk, httperf)
//	go run ./tools/maint/interop/peers -peers ~/peers        # every original that is built there
//	go run ./tools/maint/interop/peers -peers ~/peers -diff  # also the byte-level comparison
//
// The originals are never part of this repository, nor is anything that
// builds them: fetch and build each in a scratch folder of your own, with its
// own build files, in the layout docs/interop.md lists. A missing original
// skips its cases with a message; it is not a failure.
//
// The chat system's programs use the fixed ports 5000 and 6000, and its
// discovery server ignores a failed bind(): a test could talk to someone
// else's server. Those cases run in a private network namespace (unshare -n,
// with lo brought up), so the ports are theirs alone; where that is not
// permitted they run on the host after checking that both ports are free.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"serverlab/tools/internal/procs"
)

// options are the command line.
type options struct {
	peers   string        // the folder holding the originals; "" = none
	diff    bool          // also run the byte-level comparison
	only    string        // run only the cases whose name contains this
	timeout time.Duration // limit for one case
	verbose bool          // print each case's output
	bin     string        // (internal) the folder with the course's programs, already built
	netns   string        // (internal) run this group inside the current namespace and print JSON
	noNetns bool          // run fixed-port cases on the host (after checking the ports are free)
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.peers, "peers", os.Getenv("PEERS"), "`folder` with the originals, built in the layout of docs/interop.md (default $PEERS)")
	fs.BoolVar(&o.diff, "diff", false, "also send the same requests to each original and to the course's server and compare the replies byte for byte")
	fs.StringVar(&o.only, "run", "", "run only the cases whose name contains this `text`")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "time limit for one case")
	fs.BoolVar(&o.verbose, "v", false, "print every case's output")
	fs.BoolVar(&o.noNetns, "no-netns", false, "run the fixed-port chat cases on the host (checking first that ports 5000 and 6000 are free)")
	fs.StringVar(&o.bin, "bin", "", "(internal) folder with the course's programs, already built")
	fs.StringVar(&o.netns, "netns-child", "", "(internal) run this group of cases and print the results as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.peers != "" {
		abs, err := filepath.Abs(o.peers)
		if err != nil {
			fmt.Fprintln(stderr, "peers:", err)
			return 2
		}
		o.peers = abs
	}
	ctx := context.Background()
	if o.netns != "" {
		return runChild(ctx, o, stdout, stderr)
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(stderr, "peers:", err)
		return 2
	}
	tmp, err := os.MkdirTemp("", "serverlab-interop-")
	if err != nil {
		fmt.Fprintln(stderr, "peers:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	o.bin = filepath.Join(tmp, "bin")
	fmt.Fprintln(stdout, "building the course's programs …")
	if err := buildOurs(ctx, root, o.bin); err != nil {
		fmt.Fprintln(stderr, "peers:", err)
		return 1
	}
	h := newHarness(o, stdout)
	results := h.runAll(ctx)
	printTable(stdout, results)
	if failed(results) {
		fmt.Fprintln(stdout, "(-v prints every program's output; -run <text> runs the cases whose name contains it)")
		return 1
	}
	return 0
}

// runChild is the process started inside a private network namespace: it
// brings up lo, runs one group of cases and prints their results as JSON.
func runChild(ctx context.Context, o options, stdout, stderr io.Writer) int {
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		fmt.Fprintf(stderr, "ip link set lo up: %v: %s\n", err, out)
		return 1
	}
	h := newHarness(o, stderr)
	rs := h.runGroup(ctx, o.netns)
	if err := json.NewEncoder(stdout).Encode(rs); err != nil {
		return 1
	}
	return 0
}

// repoRoot finds the module root (the folder with go.mod), so the command
// works from any folder of the repository.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run it from inside the serverlab repository (no go.mod found)")
		}
		dir = parent
	}
}

// ours lists the course's programs the cases run: output name → package.
var ours = map[string]string{
	"discovery":   "./solutions/01/cmd/discovery",
	"chat02":      "./solutions/02/cmd/chatserver",
	"jobserver":   "./solutions/03/cmd/jobserver",
	"stock04":     "./solutions/04/cmd/stockserver",
	"stock05":     "./solutions/05/cmd/stockserver",
	"chat05":      "./solutions/05/cmd/chatserver",
	"wserver":     "./solutions/06/cmd/wserver",
	"cgiprog":     "./tests/webtest/cgiprog/spin",
	"loadgen":     "./tools/cmd/loadgen",
	"chat-client": "./tools/cmd/chat",
}

func buildOurs(ctx context.Context, root, dir string) error {
	for name, pkg := range ours {
		var out bytes.Buffer
		if err := procs.Build(ctx, root, pkg, filepath.Join(dir, name), &out); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out.Bytes())
		}
	}
	return nil
}

// printTable writes the results as an aligned Markdown table, then a one-line
// count, so the output can be pasted into docs/interop.md as it is.
func printTable(w io.Writer, rs []result) {
	width := len("case")
	for _, r := range rs {
		width = max(width, len(r.Case))
	}
	fmt.Fprintf(w, "\n| %-*s | result | evidence |\n|%s|--------|----------|\n", width, "case", strings.Repeat("-", width+2))
	n := map[status]int{}
	for _, r := range rs {
		n[r.Status]++
		fmt.Fprintf(w, "| %-*s | %-6s | %s |\n", width, r.Case, r.Status, strings.ReplaceAll(r.Evidence, "|", `\|`))
	}
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", n[pass], n[fail], n[skip])
}

func failed(rs []result) bool {
	for _, r := range rs {
		if r.Status == fail {
			return true
		}
	}
	return false
}
