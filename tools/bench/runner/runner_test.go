package runner

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the fake server the runner starts: with
// FAKE_SERVER=<addr> in its environment it serves an echo on addr until
// SIGTERM; with FAKE_SERVER=exit it exits at once, as a broken server would.
func TestMain(m *testing.M) {
	switch addr := os.Getenv("FAKE_SERVER"); addr {
	case "":
		os.Exit(m.Run())
	case "exit":
		io.WriteString(os.Stderr, "fake server: refusing to start\n")
		os.Exit(3)
	default:
		fakeServer(addr)
		os.Exit(0)
	}
}

func fakeServer(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(4)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	go func() {
		<-stop
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			io.Copy(c, c)
		}()
	}
}

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

// With KeepServer a round's cells run one after another on one process in
// one folder, and the servers alternate round by round.
func TestKeepServerRunsARoundOnOneProcess(t *testing.T) {
	type seen struct {
		server        string
		clients       int
		round, pid    int
		dir, fileSeen string
	}
	var trials []seen
	var setups int
	e := Experiment{
		Name: "fake", Servers: fakeServers(t), Clients: []int{1, 2, 3}, Rounds: 2, KeepServer: true, Log: io.Discard,
		Setup: func(*Trial) error { setups++; return nil },
		Trial: func(ctx context.Context, tr *Trial) (Outcome, error) {
			// Each trial leaves a file that the next one on the same server sees.
			prev, _ := os.ReadFile(tr.Dir + "/last")
			trials = append(trials, seen{tr.Server, tr.Clients, tr.Round, tr.PID, tr.Dir, string(prev)})
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
	if setups != 4 {
		t.Errorf("%d setups, want 4 (2 servers × 2 rounds)", setups)
	}
	want := []struct {
		server  string
		clients int
		round   int
	}{
		{"one", 1, 1}, {"one", 2, 1}, {"one", 3, 1}, {"two", 1, 1}, {"two", 2, 1}, {"two", 3, 1},
		{"two", 1, 2}, {"two", 2, 2}, {"two", 3, 2}, {"one", 1, 2}, {"one", 2, 2}, {"one", 3, 2},
	}
	if len(trials) != len(want) || len(res.Rows) != len(want) {
		t.Fatalf("%d trials and %d rows, want %d", len(trials), len(res.Rows), len(want))
	}
	pids := map[int]bool{}
	for i, w := range want {
		got := trials[i]
		if got.server != w.server || got.clients != w.clients || got.round != w.round {
			t.Errorf("trial %d: %s clients=%d round %d, want %s clients=%d round %d",
				i, got.server, got.clients, got.round, w.server, w.clients, w.round)
		}
		if res.Rows[i].Err != "" {
			t.Errorf("trial %d failed: %s", i, res.Rows[i].Err)
		}
		pids[got.pid] = true
		if i%3 == 0 { // the first cell of a round: a new server in a new folder
			if got.fileSeen != "" {
				t.Errorf("trial %d, the first of its round, found %q left in its folder: want a fresh one", i, got.fileSeen)
			}
			continue
		}
		if got.pid != trials[i-1].pid || got.dir != trials[i-1].dir {
			t.Errorf("trial %d ran on pid %d in %s, the one before on pid %d in %s: want the same server",
				i, got.pid, got.dir, trials[i-1].pid, trials[i-1].dir)
		}
		if prev := strconv.Itoa(want[i-1].clients); got.fileSeen != prev {
			t.Errorf("trial %d found %q in its folder, want what the trial before it left (%s)", i, got.fileSeen, prev)
		}
	}
	if len(pids) != 4 {
		t.Errorf("the trials ran on %d processes, want 4 (one per server and round)", len(pids))
	}
}
