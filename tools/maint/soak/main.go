//go:build linux

// Command soak runs the course's reference servers, each as its own process,
// under a mixed hostile load on 127.0.0.1, while well-behaved clients measure
// what the load costs them. It is a maintainer's tool: it builds the servers
// from solutions/, so it must not ship in the student release.
//
//	go run ./tools/maint/soak                          # every server, 15 s each
//	go run ./tools/maint/soak -duration 60s -md docs/soak.md
//	go run ./tools/maint/soak -servers ch06,ch04
//
// Every server gets the same attacks at once, for -duration:
//
//   - an idle flood: more idle connections than the server's file descriptor
//     limit (its RLIMIT_NOFILE is lowered to -nofile), re-opened as the server
//     drops them, so that Accept fails with EMFILE;
//   - slowloris clients, each sending one byte of a plausible request now and
//     then;
//   - non-readers: clients that ask for a lot (a big file, pipelined "show",
//     broadcasts they never read) and never read a byte;
//   - malformed bursts: 64 KiB of random bytes, then close;
//   - a connect/reset flood: connect, then close with a reset (SO_LINGER 0);
//   - and, per protocol, what else hurts it (expensive jobs, 64 KiB broadcasts).
//
// Meanwhile well-behaved clients make the server's everyday exchange in a
// loop and time it. The report has, per server: crashes (the process ended
// before it was told to stop; must be 0), the well-behaved clients' p99
// latency against a goal, the peak RSS (VmHWM of the server's process) against
// a bound, and lost acknowledged data (a trade acknowledged but missing from
// stock.txt after a clean stop, a job never answered, a private message never
// delivered, a wrong file; must be 0).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"serverlab/tools/internal/procs"
)

func main() {
	duration := flag.Duration("duration", 15*time.Second, "hostile load per server (at most 90s: the whole run stays under 10 min)")
	only := flag.String("servers", "", "comma-separated servers to soak (default all: "+strings.Join(serverNames(), ",")+")")
	nofile := flag.Uint64("nofile", 256, "RLIMIT_NOFILE of each server process (the idle flood goes past it)")
	md := flag.String("md", "", "also write the report as Markdown to this file (e.g. docs/soak.md)")
	which := flag.String("attacks", strings.Join(attackNames, ","), "comma-separated attacks to run, or none (to find which one hurts)")
	flag.Parse()
	for _, a := range strings.Split(*which, ",") {
		if a == "none" {
			continue
		}
		if !contains(attackNames, a) {
			log.Fatalf("soak: unknown attack %q (want some of %s)", a, strings.Join(attackNames, ","))
		}
		enabled[strings.TrimSpace(a)] = true
	}
	if *duration > 90*time.Second {
		log.Fatalf("soak: -duration %v: at most 90s per server", *duration)
	}
	raiseOwnLimit()
	work, err := os.MkdirTemp("", "soak-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)

	var results []result
	for _, s := range servers() {
		if *only != "" && !contains(strings.Split(*only, ","), s.name) {
			continue
		}
		log.Printf("soak: %s: building %s", s.name, s.pkg)
		r := soak(s, work, *duration, *nofile)
		log.Printf("soak: %s: %s", s.name, r.summary())
		results = append(results, r)
	}
	report := markdown(results, *duration, *nofile)
	fmt.Print(report)
	if *md != "" {
		if err := os.WriteFile(*md, []byte(report), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	for _, r := range results {
		if !r.ok() {
			os.Exit(1)
		}
	}
}

// raiseOwnLimit lifts this process's descriptor limit to its hard limit: the
// attackers hold many connections.
func raiseOwnLimit() {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil {
		lim.Cur = lim.Max
		unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
}

// build compiles pkg into dir and returns the binary's path.
func build(pkg, dir string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	return bin, procs.Build(context.Background(), "", pkg, bin, os.Stderr)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if strings.TrimSpace(e) == s {
			return true
		}
	}
	return false
}
