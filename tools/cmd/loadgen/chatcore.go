package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"serverlab/tools/internal/chatcoreload"
)

// The chatcore mode re-creates the load tester of the original chatcore
// (github.com/ebroschin/chatcore, apps/load-tester) and prints its README's
// table, one row per client count, against chapter 07's server (or the
// original). The testers are package chatcoreload's, which tools/cmd/bench's
// chatcore experiment (chapter 07's, with CPU and plots) drives too; its
// doc comment lists the method step by step. A tester that cannot log in
// within -timeout sends nothing and is counted in the last column, "Not
// ready"; the step and the ladder go on (the original's tester stops there,
// as this one does with -strict).
func init() {
	register(mode{
		name:    "chatcore",
		summary: "chatcore (chapter 07): the original load tester's method — N testers, 1 msg/s each, 10 s, echo RTT table",
		run:     runChatcore,
	})
}

func runChatcore(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "chatcore")
	cfg := chatcoreload.Config{}
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:1338", "server `address`, or several, comma-separated (chapter 08: the testers are spread over them)")
	fs.IntVar(&cfg.Clients, "clients", 30, "testers (the original's default)")
	steps := fs.String("steps", "", "comma-separated client counts to run one after another, e.g. "+chatcoreload.DefaultSteps+" (overrides -clients)")
	fs.DurationVar(&cfg.Duration, "duration", chatcoreload.DefaultDuration, "how long the testers send, from the last one ready (the original: 10s)")
	fs.DurationVar(&cfg.Interval, "interval", chatcoreload.DefaultInterval, "between one tester's messages (the original: 1s)")
	fs.DurationVar(&cfg.Timeout, "timeout", chatcoreload.DefaultTimeout, "limit on each request (the original: 10s)")
	fs.BoolVar(&cfg.Strict, "strict", false, "the original's tester on errors: the first login, join or request that fails ends the step with no table row")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	hdr := fs.Bool("hdr", false, "also print the HDR histogram's percentiles (p50 p95 p99 p99.9 max) of each run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	counts := []int{cfg.Clients}
	if *steps != "" {
		var err error
		if counts, err = chatcoreload.ParseSteps(*steps); err != nil {
			return usageError{err}
		}
	}
	if !*quiet {
		cfg.Logf = func(format string, args ...any) { fmt.Fprintf(env.stderr, "chatcore: "+format+"\n", args...) }
	}
	fmt.Fprintln(env.stdout, "| Clients | Sent | Failed | p50 (µs) | p95 (µs) | p99 (µs) | max (µs) | Not ready |")
	fmt.Fprintln(env.stdout, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var failed []int
	for _, n := range counts {
		cfg.Clients = n
		res, err := chatcoreload.Run(ctx, cfg)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil { // nothing to measure at this step; the next may fare better, or tell where it breaks
			fmt.Fprintf(env.stderr, "chatcore: %d clients: %v\n", n, strings.ReplaceAll(err.Error(), "\n", "; "))
			fmt.Fprintf(env.stdout, "| %d | 0 | 0 | – | – | – | – | %d |\n", n, n)
			failed = append(failed, n)
			continue
		}
		fmt.Fprintf(env.stdout, "| %d | %d | %d | %d | %d | %d | %d | %d |\n", res.Clients, res.Sent, res.Failed(),
			us(res.P50), us(res.P95), us(res.P99), us(res.Max), res.NotReady)
		if *hdr {
			h := res.HDR
			fmt.Fprintf(env.stdout, "<!-- hdr %d clients: p50 %v p95 %v p99 %v p99.9 %v max %v -->\n",
				n, h.P50, h.P95, h.P99, h.P999, h.Max)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("no tester could start at %v clients (see above)", failed)
	}
	return nil
}

func us(d time.Duration) int64 { return d.Microseconds() }
