package runner

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"serverlab/tools/procs/procstest"
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
