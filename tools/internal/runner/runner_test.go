package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/procs/procstest"
	"serverlab/tools/internal/procstat"
)

// The test binary doubles as the fake server the runner starts
// (procstest): with FAKE_SERVER=<addr> in its environment it serves an echo
// on addr until SIGTERM; with FAKE_SERVER=exit it exits at once, as a broken
// server would.
func TestMain(m *testing.M) { procstest.Main(m) }

// echoTrial sends one line per client to the server and reads it back.
func echoTrial(ctx context.Context, t *Trial) (Outcome, error) {
	c, err := net.DialTimeout("tcp", t.Addr, 5*time.Second)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	for range t.Clients {
		if _, err := io.WriteString(c, "ping "+t.Knob+"\n"); err != nil {
			return Outcome{}, err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return Outcome{}, err
		}
		if line != "ping "+t.Knob+"\n" {
			return Outcome{}, errors.New("bad echo: " + line)
		}
	}
	return Outcome{Values: map[string]float64{"successes": float64(t.Clients)}}, nil
}

func fakeServers(t *testing.T) []Server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the runner samples servers through Linux's /proc")
	}
	return []Server{
		{Name: "one", Bin: os.Args[0], Env: []string{"FAKE_SERVER={addr}"}},
		{Name: "two", Bin: os.Args[0], Env: []string{"FAKE_SERVER={addr}"}},
	}
}

func TestRunStartsSamplesAndStopsEachServer(t *testing.T) {
	var setups []string
	e := Experiment{
		Name: "fake", Servers: fakeServers(t), Clients: []int{1, 3}, KnobName: "size", Knobs: []string{"s"},
		Rounds: 2, Trial: echoTrial, Log: io.Discard,
		Setup: func(tr *Trial) error {
			setups = append(setups, tr.Server)
			return os.WriteFile(tr.Dir+"/users.txt", nil, 0o600)
		},
	}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2*2*2 || len(setups) != len(res.Rows) {
		t.Fatalf("%d rows and %d setups, want 8 of each (2 servers × 2 client counts × 2 rounds)", len(res.Rows), len(setups))
	}
	for _, row := range res.Rows {
		if row.Err != "" {
			t.Errorf("%s, %d clients, round %d failed: %s", row.Server, row.Clients, row.Round, row.Err)
		}
		if row.Values["rss_kib"] <= 0 || row.Values["wall_s"] <= 0 {
			t.Errorf("%s: the server was not sampled: %v", row.Server, row.Values)
		}
		if _, ok := row.Values["cpu_us_per_op"]; !ok {
			t.Errorf("%s: no cpu_us_per_op although the trial reported successes: %v", row.Server, row.Values)
		}
	}
	if v, n := res.Median("two", Cell{Clients: 3, Knob: "s"}, "successes"); v != 3 || n != 2 {
		t.Errorf("median successes of two at 3 clients = %v over %d trials, want 3 over 2", v, n)
	}
}

func TestRunReportsAServerThatDoesNotStart(t *testing.T) {
	servers := fakeServers(t)
	servers[1].Env = []string{"FAKE_SERVER=exit"}
	e := Experiment{Name: "fake", Servers: servers, Clients: []int{1}, Rounds: 1, Trial: echoTrial, Log: io.Discard}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0].Err; got != "" {
		t.Errorf("the working server's trial failed: %s", got)
	}
	if got := res.Rows[1].Err; !strings.Contains(got, "exited before listening") || !strings.Contains(got, "refusing to start") {
		t.Errorf("the broken server's trial says %q, want its exit and its stderr", got)
	}
}

func TestRunRefusesATakenFixedAddress(t *testing.T) {
	servers := fakeServers(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	servers[0].Addr = ln.Addr().String()
	e := Experiment{Name: "fake", Servers: servers[:1], Clients: []int{1}, Rounds: 1, Trial: echoTrial, Log: io.Discard}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0].Err; !strings.Contains(got, "not free") {
		t.Errorf("a trial on a taken fixed address says %q, want that it is not free", got)
	}
}

func TestRunRejectsMalformedExperiments(t *testing.T) {
	ok := Experiment{Name: "x", Servers: []Server{{Name: "a", Bin: "/bin/true"}}, Clients: []int{1}, Rounds: 1, Trial: echoTrial}
	for name, mutate := range map[string]func(*Experiment){
		"no servers":    func(e *Experiment) { e.Servers = nil },
		"no clients":    func(e *Experiment) { e.Clients = nil },
		"zero rounds":   func(e *Experiment) { e.Rounds = 0 },
		"no trial":      func(e *Experiment) { e.Trial = nil },
		"pkg and bin":   func(e *Experiment) { e.Servers = []Server{{Name: "a", Bin: "x", Pkg: "./y"}} },
		"duplicate":     func(e *Experiment) { e.Servers = []Server{{Name: "a", Bin: "x"}, {Name: "a", Bin: "y"}} },
		"bad baseline":  func(e *Experiment) { e.Baseline = "zzz" },
		"no experiment": func(e *Experiment) { e.Name = "" },
	} {
		e := ok
		mutate(&e)
		if _, err := e.Run(context.Background()); err == nil {
			t.Errorf("%s: Run accepted it", name)
		}
	}
}

func TestExpandPlaceholders(t *testing.T) {
	tr := &Trial{Addr: "127.0.0.1:6000", Dir: "/tmp/x", Clients: 7, Knob: "4"}
	got := expand("-addr={addr} -port={port} -users={dir}/u.txt -n={clients} -workers={knob}", tr)
	want := "-addr=127.0.0.1:6000 -port=6000 -users=/tmp/x/u.txt -n=7 -workers=4"
	if got != want {
		t.Errorf("expand = %q, want %q", got, want)
	}
}

// With KeepServer the servers alternate round by round, rotating, and each
// runs every cell of its round in a row.
func TestOrderWithKeepServer(t *testing.T) {
	e := Experiment{Servers: []Server{{Name: "a"}, {Name: "b"}}, Clients: []int{1, 10}, Knobs: []string{"x", "y"}, Rounds: 2, KeepServer: true}
	var got []string
	for _, st := range e.Order() {
		got = append(got, fmt.Sprintf("%d/%s/%d/%s", st.Clients, st.Knob, st.Round, e.Servers[st.Server].Name))
	}
	want := []string{
		"1/x/1/a", "1/y/1/a", "10/x/1/a", "10/y/1/a", "1/x/1/b", "1/y/1/b", "10/x/1/b", "10/y/1/b",
		"1/x/2/b", "1/y/2/b", "10/x/2/b", "10/y/2/b", "1/x/2/a", "1/y/2/a", "10/x/2/a", "10/y/2/a",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
}

// With KeepServer a round's cells run one after another on one process in
// one folder, which the next round does not share.
func TestKeepServerRunsARoundOnOneProcess(t *testing.T) {
	type seen struct {
		clients, round, pid int
		dir, fileSeen       string
	}
	var trials []seen
	var setups int
	e := Experiment{
		Name: "fake", Servers: fakeServers(t)[:1], Clients: []int{1, 2, 3}, Rounds: 2, KeepServer: true, Log: io.Discard,
		Setup: func(*Trial) error { setups++; return nil },
		Trial: func(ctx context.Context, tr *Trial) (Outcome, error) {
			// Each trial leaves a file that the next one on the same server sees.
			prev, _ := os.ReadFile(tr.Dir + "/last")
			trials = append(trials, seen{tr.Clients, tr.Round, tr.PID, tr.Dir, string(prev)})
			if err := os.WriteFile(tr.Dir+"/last", []byte(strconv.Itoa(tr.Clients)), 0o600); err != nil {
				return Outcome{}, err
			}
			return echoTrial(ctx, tr)
		},
	}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if setups != 2 {
		t.Errorf("%d setups, want 2 (one per round)", setups)
	}
	if len(trials) != 6 || len(res.Rows) != 6 {
		t.Fatalf("%d trials and %d rows, want 6 (3 client counts × 2 rounds)", len(trials), len(res.Rows))
	}
	for i, got := range trials {
		if want := []int{1, 2, 3}[i%3]; got.clients != want || got.round != 1+i/3 {
			t.Errorf("trial %d: clients=%d round %d, want clients=%d round %d", i, got.clients, got.round, want, 1+i/3)
		}
		if res.Rows[i].Err != "" {
			t.Errorf("trial %d failed: %s", i, res.Rows[i].Err)
		}
		if i%3 == 0 { // the first cell of a round: a new server in a new folder
			if got.fileSeen != "" || (i > 0 && (got.pid == trials[i-1].pid || got.dir == trials[i-1].dir)) {
				t.Errorf("trial %d, the first of its round, ran on pid %d in %s and found %q there: want a fresh server and folder",
					i, got.pid, got.dir, got.fileSeen)
			}
			continue
		}
		if got.pid != trials[i-1].pid || got.dir != trials[i-1].dir {
			t.Errorf("trial %d ran on pid %d in %s, the one before on pid %d in %s: want the same server",
				i, got.pid, got.dir, trials[i-1].pid, trials[i-1].dir)
		}
		if prev := strconv.Itoa(trials[i-1].clients); got.fileSeen != prev {
			t.Errorf("trial %d found %q in its folder, want what the trial before it left (%s)", i, got.fileSeen, prev)
		}
	}
}

// With KeepServer, a server that dies fails the rest of its round, without
// running their trials against nobody.
func TestKeepServerReportsAServerThatDied(t *testing.T) {
	calls := 0
	e := Experiment{
		Name: "fake", Servers: fakeServers(t)[:1], Clients: []int{1, 2, 3}, Rounds: 1, KeepServer: true, Log: io.Discard,
		Trial: func(ctx context.Context, tr *Trial) (Outcome, error) {
			calls++
			p, err := os.FindProcess(tr.PID)
			if err == nil {
				err = p.Kill() // SIGKILL on Unix
			}
			if err != nil {
				return Outcome{}, err
			}
			// Poll until it is gone or a zombie, when procstat has nothing to
			// read: there is no event for another process's death.
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if _, err := procstat.Read(tr.PID); err != nil {
					return Outcome{}, nil
				}
			}
			return Outcome{}, errors.New("the server still runs 5 s after SIGKILL")
		},
	}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("the trial ran %d times, want once: the server was dead for the others", calls)
	}
	for _, row := range res.Rows[1:] {
		if row.Err == "" {
			t.Errorf("clients=%d after the server died: no error", row.Clients)
		}
	}
}
