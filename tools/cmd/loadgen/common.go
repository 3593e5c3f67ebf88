package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"serverlab/tools/internal/load"
)

// defaultDuration bounds a run given neither -requests nor -duration.
const defaultDuration = 10 * time.Second

// commonFlags are the flags every mode shares: where to connect, how much load
// to apply, and where the result goes. A mode adds them with addCommonFlags,
// adds its own, and calls run.
type commonFlags struct {
	addr        string
	clients     int
	requests    int
	duration    time.Duration
	rate        float64
	maxInFlight int
	timeout     time.Duration
	csvPath     string
	json        bool
	quiet       bool
	labels      labelList
}

// addCommonFlags defines the shared flags on fs; defaultAddr is the mode's
// usual server address.
func addCommonFlags(fs *flag.FlagSet, defaultAddr string) *commonFlags {
	c := &commonFlags{}
	fs.StringVar(&c.addr, "addr", defaultAddr, "server `address`")
	fs.IntVar(&c.clients, "clients", 10, "concurrent clients (connections)")
	fs.IntVar(&c.requests, "requests", 0, "requests per client (with -rate: clients×requests in all); 0 = until -duration")
	fs.DurationVar(&c.duration, "duration", 0, "stop issuing requests after this long; 0 = until -requests ("+defaultDuration.String()+" if neither is set)")
	fs.Float64Var(&c.rate, "rate", 0, "open loop: this many requests per second, each timed from its intended start; 0 = closed loop")
	fs.IntVar(&c.maxInFlight, "max-inflight", 0, "with -rate: cap on outstanding requests, beyond which arrivals fail (default max(clients, 1000))")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Second, "limit on each request and each connection set-up")
	fs.StringVar(&c.csvPath, "csv", "", "append the result as a CSV row to `file` (with a header if the file is new; - = stdout)")
	fs.BoolVar(&c.json, "json", false, "print the result as JSON instead of text")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress lines on stderr (they only appear on a terminal anyway)")
	fs.Var(&c.labels, "label", "extra `name=value` column(s) for the CSV/JSON result; repeatable, or comma-separated")
	return c
}

// run drives the load these flags describe with newClient and reports the
// result. A result is reported even when the run ends early with an error
// (e.g. interrupted), since what was measured until then is still useful.
func (c *commonFlags) run(ctx context.Context, env *env, mode string, newClient load.NewClient) error {
	res, runErr := c.drive(ctx, env, newClient)
	if err := c.report(env, mode, res); err != nil {
		return err
	}
	return runErr
}

// drive runs a closed loop, or a fixed rate when -rate is set.
func (c *commonFlags) drive(ctx context.Context, env *env, newClient load.NewClient) (load.Result, error) {
	var progress io.Writer
	if env.terminal && !c.quiet {
		progress = env.stderr
	}
	duration := c.duration
	if c.requests == 0 && duration == 0 {
		duration = defaultDuration
	}
	if c.rate > 0 {
		return load.FixedRate{
			Rate: c.rate, Requests: c.clients * c.requests, Duration: duration,
			Clients: c.clients, MaxInFlight: c.maxInFlight, NewClient: newClient, Progress: progress,
		}.Run(ctx)
	}
	return load.ClosedLoop{
		Clients: c.clients, Requests: c.requests, Duration: duration, NewClient: newClient, Progress: progress,
	}.Run(ctx)
}

// report prints res (text or JSON) and appends it to the CSV file if asked.
// With -csv - the CSV goes to stdout and the summary to stderr.
func (c *commonFlags) report(env *env, mode string, res load.Result) error {
	labels := c.resultLabels(mode)
	summary := env.stdout
	if c.csvPath == "-" {
		summary = env.stderr
		if err := res.WriteCSV(env.stdout, true, labels...); err != nil {
			return err
		}
	} else if c.csvPath != "" {
		if err := appendCSV(c.csvPath, res, labels); err != nil {
			return err
		}
	}
	if c.json {
		return res.WriteJSON(summary, labels...)
	}
	return res.WriteText(summary, labels...)
}

// resultLabels are the columns that say which experiment a row is: the mode,
// the load, and the user's -label pairs.
func (c *commonFlags) resultLabels(mode string) []load.Label {
	return append([]load.Label{
		{Name: "mode", Value: mode},
		{Name: "clients", Value: strconv.Itoa(c.clients)},
		{Name: "rate", Value: strconv.FormatFloat(c.rate, 'g', -1, 64)},
	}, c.labels...)
}

// appendCSV appends res to the CSV file at path, writing the header first
// when the file is new or empty, so that repeated runs build one table.
func appendCSV(path string, res load.Result, labels []load.Label) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	return res.WriteCSV(f, info.Size() == 0, labels...)
}

// labelList is the value of the repeatable -label flag.
type labelList []load.Label

func (l *labelList) String() string {
	parts := make([]string, len(*l))
	for i, label := range *l {
		parts[i] = label.Name + "=" + label.Value
	}
	return strings.Join(parts, ",")
}

func (l *labelList) Set(s string) error {
	for pair := range strings.SplitSeq(s, ",") {
		name, value, ok := strings.Cut(pair, "=")
		if !ok || name == "" {
			return fmt.Errorf("label %q is not name=value", pair)
		}
		*l = append(*l, load.Label{Name: name, Value: value})
	}
	return nil
}
