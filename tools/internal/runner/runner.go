// Package runner is the course's experiment runner: it measures servers
// against each other on a matrix of server × clients × knob, and writes what
// it measured as CSV, a Markdown table of medians and ratios, and PNG plots.
//
// An Experiment names its Servers (a Go package the runner builds once, or an
// external program such as an original in C), the client counts, an optional
// knob (worker count, file size …) and a Trial function that drives one
// server with one load, typically with loadgen's drivers (package
// serverlab/tools/internal/load). For every trial the runner starts the server
// as a child process in a fresh folder, waits until its port accepts, samples
// its CPU (utime+stime), RSS and PSS from /proc while the trial runs, and
// stops it.
//
// The servers run alternately: every cell (clients × knob) runs each server
// once per round, the next server starting where the last stopped and the
// order rotating from round to round (A B C, B C A, …). Noise from the rest
// of the machine then falls on every server alike, and the medians over the
// rounds compare like with like.
//
// With KeepServer, a server process lives for a whole round instead of one
// trial: the round's cells run on it one after another (a load tester's
// ladder of client counts against one server, each step seeing what the
// steps before it left), and the servers alternate round by round.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"serverlab/tools/internal/load"
)

// Server is one program under test. Set Pkg for a Go program the runner
// builds (once, before the first trial), or Bin for a program that exists
// already (an original, from PEERS).
//
// Args and Env may hold placeholders, replaced for every trial: {addr}
// (host:port), {port}, {dir} (the trial's folder, also the server's working
// folder), {clients} and {knob}.
type Server struct {
	Name string   // its label in tables and plots: "ch05", "threaded"
	Pkg  string   // a Go package to build, e.g. "./solutions/05/cmd/chatserver"
	Bin  string   // or a program to run as it is
	Args []string // e.g. "-addr", "{addr}", "-users", "{dir}/users.txt"
	Env  []string // added to the runner's environment, "KEY=value"
	// Addr is where the server listens when it cannot be told (the originals
	// listen on fixed ports); empty: a free port on 127.0.0.1 for each trial.
	Addr string
}

// Trial is one measurement: one server, one client count, one knob value,
// one round. The trial function gets the server running and ready at Addr.
type Trial struct {
	Server  string
	Clients int
	Knob    string // "" when the experiment has no knob
	Round   int    // 1-based
	Addr    string // where the server listens
	Dir     string // the trial's own folder, the server's working folder
	PID     int    // the server's process id (0 in Setup, before it starts)
	Log     io.Writer
}

// Logf writes one progress line for the trial to the runner's log.
func (t *Trial) Logf(format string, args ...any) {
	fmt.Fprintf(t.Log, "    "+format+"\n", args...)
}

// Outcome is what a trial measured.
type Outcome struct {
	// Values are the trial's numbers by column name, e.g. "p99_ms", "lost".
	// LoadValues fills the usual ones from a load.Result. The runner adds
	// the server's: cpu_s, cpu_pct, rss_kib, pss_kib (see Run).
	Values map[string]float64
	// Latency, if set, is the trial's latency histogram in microseconds (as
	// load.Result.Latency). The runner merges it per cell across rounds, for
	// distribution plots (DistributionPlot).
	Latency *hdrhistogram.Histogram
}

// LoadValues returns a load.Result's numbers under the runner's column
// names: successes, failures, throughput_rps and the latencies in ms
// (mean_ms, p50_ms, p95_ms, p99_ms, p999_ms, max_ms).
func LoadValues(r load.Result) map[string]float64 {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return map[string]float64{
		"successes": float64(r.Successes), "failures": float64(r.Failures),
		"throughput_rps": r.Throughput,
		"mean_ms":        ms(r.Mean), "p50_ms": ms(r.P50), "p95_ms": ms(r.P95),
		"p99_ms": ms(r.P99), "p999_ms": ms(r.P999), "max_ms": ms(r.Max),
	}
}

// Experiment is a matrix of Servers × Clients × Knobs, each cell measured
// Rounds times by Trial.
type Experiment struct {
	Name    string   // e.g. "chat-stress"; the CSV's first column
	Command string   // the command that reproduces it, quoted in results.md
	Servers []Server //
	Clients []int    // client counts; at least one
	// KnobName names the knob's column ("workers"); Knobs are its values.
	// No knob: leave both empty.
	KnobName string
	Knobs    []string
	Rounds   int // at least 1
	// KeepServer starts each server once per round instead of once per
	// trial: the round's cells run one after another on that process, in
	// its folder, in the order of Clients (and Knobs), so that a cell sees
	// what the cells before it left (users created, a database grown), as
	// a load tester's ladder of client counts run against one server does.
	// Setup then runs once per server and round, with the first cell.
	KeepServer bool
	// Setup, if set, prepares a trial's folder before the server starts,
	// e.g. writes the users file a chat server reads.
	Setup func(t *Trial) error
	// Trial drives the running server once. It must return within a bounded
	// time and promptly once ctx is done.
	Trial func(ctx context.Context, t *Trial) (Outcome, error)
	// SampleEvery is how often the server's RSS and PSS are read during a
	// trial (the peaks are reported); 0 means 250 ms.
	SampleEvery time.Duration
	// Baseline is the server the others are compared with in ratio columns;
	// empty: the first server.
	Baseline string
	Table    []Column // the Markdown table's columns (medians per cell)
	Plots    []Plot   // line plots drawn by WriteFiles
	Log      io.Writer
}

// Column is one column of the Markdown table: the median of a value per
// cell and, with Ratio, that median divided by the baseline server's.
type Column struct {
	Key   string // a value's name, e.g. "p99_ms"
	Title string // the header, with its unit, e.g. "p99 ms"
	Ratio bool
}

// Cell is one trial's place in the matrix, without the server.
type Cell struct {
	Clients int
	Knob    string
}

// Step is one trial in the order the runner runs them.
type Step struct {
	Cell
	Round  int // 1-based
	Server int // index into Servers
}

// Order returns the trials in the order they run: cell by cell; within a
// cell, round by round; within a round every server once, starting one
// further each round so that no server always goes first. With KeepServer:
// round by round; within a round server by server, rotating in the same
// way; within a server every cell, in order.
func (e *Experiment) Order() []Step {
	var cells []Cell
	for _, c := range e.Clients {
		if len(e.Knobs) == 0 {
			cells = append(cells, Cell{c, ""})
		}
		for _, k := range e.Knobs {
			cells = append(cells, Cell{c, k})
		}
	}
	n := len(e.Servers)
	var steps []Step
	if e.KeepServer {
		for r := range e.Rounds {
			for i := range n {
				for _, c := range cells {
					steps = append(steps, Step{c, r + 1, (r + i) % n})
				}
			}
		}
		return steps
	}
	for _, c := range cells {
		for r := range e.Rounds {
			for i := range n {
				steps = append(steps, Step{c, r + 1, (r + i) % n})
			}
		}
	}
	return steps
}

func (e *Experiment) validate() error {
	switch {
	case e.Name == "":
		return errors.New("runner: the experiment has no name")
	case len(e.Servers) == 0:
		return fmt.Errorf("runner: %s has no servers", e.Name)
	case len(e.Clients) == 0:
		return fmt.Errorf("runner: %s has no client counts", e.Name)
	case e.Rounds < 1:
		return fmt.Errorf("runner: %s: rounds must be at least 1", e.Name)
	case e.Trial == nil:
		return fmt.Errorf("runner: %s has no Trial function", e.Name)
	}
	seen := map[string]bool{}
	for _, s := range e.Servers {
		if s.Name == "" || seen[s.Name] {
			return fmt.Errorf("runner: %s: server names must be unique and not empty (%q)", e.Name, s.Name)
		}
		seen[s.Name] = true
		if (s.Pkg == "") == (s.Bin == "") {
			return fmt.Errorf("runner: server %s: set exactly one of Pkg and Bin", s.Name)
		}
	}
	if e.Baseline != "" && !seen[e.Baseline] {
		return fmt.Errorf("runner: %s: baseline %q is not one of the servers", e.Name, e.Baseline)
	}
	return nil
}

// Run builds the servers that need building, runs every trial in Order and
// returns what they measured. A failed trial is logged and kept in the
// results with its error (it is left out of the medians); Run itself fails
// only if the experiment is malformed, a server does not build, or ctx ends.
//
// Besides the trial's own values, every row has the server's: cpu_s (CPU
// seconds, utime+stime, used during the trial), cpu_pct (cpu_s over the
// trial's wall time, 100 = one core), rss_kib and pss_kib (the peaks sampled
// during the trial), wall_s, and, when the trial reported successes,
// cpu_us_per_op (server CPU µs per success).
func (e Experiment) Run(ctx context.Context) (*Results, error) {
	if e.Log == nil {
		e.Log = os.Stderr
	}
	if e.SampleEvery <= 0 {
		e.SampleEvery = 250 * time.Millisecond
	}
	if err := e.validate(); err != nil {
		return nil, err
	}
	binDir, err := os.MkdirTemp("", "bench-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binDir)
	servers, err := Build(ctx, binDir, e.Servers, e.Log)
	if err != nil {
		return nil, err
	}
	res := newResults(&e)
	steps := e.Order()
	start := time.Now()
	var ss *session
	defer func() { ss.close() }()
	for i, st := range steps {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		s := servers[st.Server]
		fmt.Fprintf(e.Log, "%s [%d/%d] %s clients=%d%s round %d/%d\n", e.Name, i+1, len(steps),
			s.Name, st.Clients, knobLabel(e.KnobName, st.Knob), st.Round, e.Rounds)
		if ss != nil && !(e.KeepServer && ss.server == st.Server && ss.round == st.Round) {
			ss.close()
			ss = nil
		}
		if ss == nil {
			ss = e.open(ctx, s, st)
		}
		row, hist := e.runTrial(ctx, ss, st)
		res.add(row, hist)
		fmt.Fprintf(e.Log, "    %s  (%s elapsed)\n", row.summary(), time.Since(start).Round(time.Second))
	}
	return res, ctx.Err()
}

func knobLabel(name, value string) string {
	if name == "" && value == "" {
		return ""
	}
	return " " + name + "=" + value
}

// session is a running server in its folder: one trial's or, with
// KeepServer, one round's.
type session struct {
	server, round int   // the Step's
	trial         Trial // Server, Addr, Dir, PID, Log; the cell's fields are set per trial
	proc          *process
	err           error // why it did not start; every trial on it fails with it
}

// open prepares a fresh folder and address, runs Setup and starts s there.
// A failure is kept in the session, for its trials to report.
func (e *Experiment) open(ctx context.Context, s Server, st Step) *session {
	ss := &session{server: st.Server, round: st.Round,
		trial: Trial{Server: s.Name, Clients: st.Clients, Knob: st.Knob, Round: st.Round, Log: e.Log}}
	ss.err = ss.launch(ctx, e.Setup, s)
	return ss
}

func (ss *session) launch(ctx context.Context, setup func(*Trial) error, s Server) error {
	var err error
	if ss.trial.Dir, err = os.MkdirTemp("", "bench-trial-"); err != nil {
		return err
	}
	if ss.trial.Addr, err = trialAddr(s); err != nil {
		return err
	}
	if setup != nil {
		if err := setup(&ss.trial); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	if ss.proc, err = start(ctx, s, &ss.trial); err != nil {
		return err
	}
	ss.trial.PID = ss.proc.PID()
	return nil
}

// close stops the server and removes the folder; a nil session is closed.
func (ss *session) close() {
	if ss == nil {
		return
	}
	if ss.proc != nil {
		ss.proc.stop()
	}
	if ss.trial.Dir != "" {
		os.RemoveAll(ss.trial.Dir)
	}
}

// runTrial runs one trial on the session's server.
func (e *Experiment) runTrial(ctx context.Context, ss *session, st Step) (Row, *hdrhistogram.Histogram) {
	row := Row{Experiment: e.Name, Server: ss.trial.Server, Clients: st.Clients, Knob: st.Knob, Round: st.Round}
	out, err := e.measure(ctx, ss, st)
	row.Values = out.Values
	if err != nil {
		row.Err = err.Error()
		return row, nil
	}
	return row, out.Latency
}

func (e *Experiment) measure(ctx context.Context, ss *session, st Step) (Outcome, error) {
	if ss.err != nil {
		return Outcome{}, ss.err
	}
	p := ss.proc
	if !p.Alive() {
		return Outcome{}, fmt.Errorf("the server exited during an earlier trial: %s", p.exitStatus())
	}
	t := ss.trial
	t.Clients, t.Knob, t.Round = st.Clients, st.Knob, st.Round
	mon, err := startMonitor(t.PID, e.SampleEvery)
	if err != nil {
		return Outcome{}, err
	}
	began := time.Now()
	out, err := e.Trial(ctx, &t)
	wall := time.Since(began)
	usage := mon.stop()
	if out.Values == nil {
		out.Values = map[string]float64{}
	}
	usage.addTo(out.Values, wall)
	if err == nil && !p.Alive() {
		err = fmt.Errorf("the server exited during the trial: %s", p.exitStatus())
	}
	return out, err
}

// format renders a value for tables and progress lines with three
// significant digits or so: 0.123, 1.23, 12.3, 123, 12345.
func format(v float64) string {
	switch a := abs(v); {
	case a >= 100 || a == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
