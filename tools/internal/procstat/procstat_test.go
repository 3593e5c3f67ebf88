package procstat_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"serverlab/tools/internal/procstat"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// statLine builds a /proc/<pid>/stat line with the given command name and
// values in the fields procstat reads (3 state, 14 utime, 15 stime, 20
// num_threads); the others are copied from a real line.
func statLine(comm string, state byte, utime, stime, threads int) string {
	return fmt.Sprintf("20633 (%s) %c 20631 20631 2700 0 -1 4194304 98 0 0 0 %d %d 0 0 20 0 %d 0 88956 "+
		"3133440 394 18446744073709551615 94117219581952 94117219601833 140726656508992 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
		comm, state, utime, stime, threads)
}

func TestParseStat(t *testing.T) {
	cases := []struct {
		comm                  string
		state                 byte
		utime, stime, threads int
	}{
		{"cat", 'R', 0, 0, 1},
		{"chat server", 'S', 1234, 567, 12},
		{"a) (b) R 1 2 (c", 'D', 99999999, 1, 3}, // a name may hold anything but NUL
	}
	for _, c := range cases {
		line := statLine(c.comm, c.state, c.utime, c.stime, c.threads)
		got, err := procstat.ParseStat([]byte(line))
		want := procstat.Stat{State: c.state, UTime: uint64(c.utime), STime: uint64(c.stime), Threads: c.threads}
		assert.NoError(t, err, "ParseStat(%q)", line)
		assert.Equal(t, want, got, "ParseStat(%q)", line)
	}
	for _, bad := range []string{"", "20633 cat R 1", "20633 (cat) R 1 2 3", strings.Replace(statLine("x", 'R', 1, 2, 3), " 1 2 0 0 20", " 1 x 0 0 20", 1)} {
		got, err := procstat.ParseStat([]byte(bad))
		assert.Error(t, err, "ParseStat(%q) = %+v", bad, got)
	}
}

const sampleStatus = `Name:	chat_server
Umask:	0022
State:	S (sleeping)
Pid:	4242
VmPeak:	  223844 kB
VmHWM:	    5120 kB
VmRSS:	    4480 kB
RssAnon:	     512 kB
Threads:	51
voluntary_ctxt_switches:	17
`

const sampleSmapsRollup = `561a5d67c000-7ffc57286000 ---p 00000000 00:00 0                          [rollup]
Rss:                4480 kB
Pss:                1370 kB
Pss_Dirty:           112 kB
Pss_Anon:            112 kB
Shared_Clean:       1600 kB
`

func TestParseStatus(t *testing.T) {
	got, err := procstat.ParseStatus([]byte(sampleStatus))
	want := procstat.Status{RSSKiB: 4480, PeakRSSKiB: 5120, Threads: 51}
	assert.NoError(t, err, "ParseStatus(%q)", sampleStatus)
	assert.Equal(t, want, got, "ParseStatus(%q)", sampleStatus)
	// A kernel thread has no VmRSS line: RSS 0, not an error.
	kernel := "Name:\tkthreadd\nThreads:\t1\n"
	got, err = procstat.ParseStatus([]byte(kernel))
	assert.NoError(t, err, "ParseStatus(%q)", kernel)
	assert.Equal(t, procstat.Status{Threads: 1}, got, "ParseStatus(%q): want RSS 0, 1 thread", kernel)
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\nThreads:\t1\n", "Threads:\tmany\n"} {
		got, err := procstat.ParseStatus([]byte(bad))
		assert.Error(t, err, "ParseStatus(%q) = %+v", bad, got)
	}
}

func TestParseSmapsRollup(t *testing.T) {
	got, err := procstat.ParseSmapsRollup([]byte(sampleSmapsRollup))
	assert.NoError(t, err, "ParseSmapsRollup(%q)", sampleSmapsRollup)
	assert.Equal(t, int64(1370), got, "ParseSmapsRollup(%q): want the Pss line, not Pss_Anon", sampleSmapsRollup)
	got, err = procstat.ParseSmapsRollup([]byte("Rss: 10 kB\nPss_Anon: 5 kB\n"))
	assert.Error(t, err, "ParseSmapsRollup without a Pss line = %d", got)
}

func TestCPUPercent(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		ticks uint64
		wall  time.Duration
		want  float64
	}{
		{procstat.ClockTicks / 2, time.Second, 50},                // half a core
		{procstat.ClockTicks * 3, 2 * time.Second, 150},           // one and a half cores
		{0, 500 * time.Millisecond, 0},                            // idle
		{procstat.ClockTicks, 0, 0},                               // no time passed: no rate
		{procstat.ClockTicks / 10, 100 * time.Millisecond, 100.0}, // one core over a short interval
	}
	for _, c := range cases {
		prev := procstat.Snapshot{Time: t0, CPUTicks: 1000}
		cur := procstat.Snapshot{Time: t0.Add(c.wall), CPUTicks: 1000 + c.ticks}
		assert.Equal(t, c.want, procstat.CPUPercent(prev, cur), "CPU %% for %d ticks over %v", c.ticks, c.wall)
	}
}

// TestReadOwnProcess reads the test process itself: every figure must be
// present and plausible.
func TestReadOwnProcess(t *testing.T) {
	s, err := procstat.Read(os.Getpid())
	require.NoError(t, err)
	const maxSaneKiB = 16 << 20 // 16 GiB: a test binary is far smaller
	if s.RSSKiB <= 0 || s.RSSKiB > maxSaneKiB {
		t.Errorf("own RSS: %d KiB, want between 0 and %d", s.RSSKiB, maxSaneKiB)
	}
	// PSS counts shared pages fractionally, so it cannot exceed RSS (with
	// some slack: the two files are read at different instants).
	if s.PSSKiB <= 0 || s.PSSKiB > s.RSSKiB+1024 {
		t.Errorf("own PSS: %d KiB with RSS %d KiB, want 0 < PSS <= RSS", s.PSSKiB, s.RSSKiB)
	}
	if s.Threads < 1 || s.Threads > 10000 {
		t.Errorf("own threads: %d, want at least 1", s.Threads)
	}
	if d := time.Since(s.Time); d < 0 || d > time.Minute {
		t.Errorf("snapshot time %v is %v from now", s.Time, d)
	}
}

// TestSamplerMeasuresOwnCPU burns CPU until the kernel's tick counter moves,
// and checks that the sample reports it.
func TestSamplerMeasuresOwnCPU(t *testing.T) {
	sampler, err := procstat.NewSampler(os.Getpid())
	require.NoError(t, err)
	before, err := procstat.Read(os.Getpid())
	require.NoError(t, err)
	deadline := time.Now().Add(10 * time.Second)
	for x := uint64(1); ; x = x*6364136223846793005 + 1 { // busy work
		if x%(1<<16) == 0 {
			now, err := procstat.Read(os.Getpid())
			require.NoError(t, err)
			if now.CPUTicks > before.CPUTicks {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CPU ticks did not move in 10s of busy work (stuck at %d)", now.CPUTicks)
			}
		}
	}
	s, err := sampler.Sample()
	require.NoError(t, err)
	if s.CPUPercent <= 0 || s.Elapsed <= 0 || s.RSSKiB <= 0 || s.Threads < 1 {
		t.Errorf("after busy work: %+v; want CPU%%, elapsed, RSS and threads > 0", s)
	}
}

// TestRunSamplesAtInterval runs the sampler on the test process with a fake
// clock: a 2.25 s run at 500 ms gives samples at exactly 0.5, 1, 1.5 and 2 s.
func TestRunSamplesAtInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval, run = 500 * time.Millisecond, 2250 * time.Millisecond
		ctx, cancel := context.WithTimeout(t.Context(), run)
		defer cancel()
		var elapsed []time.Duration
		err := procstat.Run(ctx, os.Getpid(), interval, func(s procstat.Sample) error {
			elapsed = append(elapsed, s.Elapsed)
			return nil
		})
		var want []time.Duration
		for d := interval; d <= run; d += interval {
			want = append(want, d)
		}
		assert.NoError(t, err, "Run for %v every %v", run, interval)
		assert.Equal(t, want, elapsed, "Run for %v every %v: the samples' elapsed times", run, interval)
	})
}

func TestRunStopsOnEmitError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := errors.New("disk full")
		calls := 0
		err := procstat.Run(t.Context(), os.Getpid(), time.Second, func(procstat.Sample) error {
			calls++
			return stop
		})
		assert.ErrorIs(t, err, stop, "emit failing: Run")
		assert.Equal(t, 1, calls, "emit failing: calls of emit before Run returned")
	})
}

// TestRunEndsWhenProcessExits samples a child that is made to exit: Run must
// notice (the child is a zombie until reaped, and then gone) and return nil.
func TestRunEndsWhenProcessExits(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	samples := 0
	err := procstat.Run(ctx, cmd.Process.Pid, time.Millisecond, func(procstat.Sample) error {
		samples++
		if samples == 3 {
			cmd.Process.Kill()
		}
		return nil
	})
	cmd.Wait()
	if err != nil || ctx.Err() != nil || samples < 3 {
		t.Errorf("child killed after 3 samples: Run returned %v after %d samples (context: %v); want nil, promptly",
			err, samples, ctx.Err())
	}
	_, err = procstat.Read(cmd.Process.Pid)
	assert.ErrorIs(t, err, procstat.ErrExited, "Read of a reaped child")
}

func TestSampleCSV(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC)
	samples := []procstat.Sample{
		{Time: at, Elapsed: 1500 * time.Millisecond, CPUPercent: 12.34, RSSKiB: 4480, PSSKiB: 1370, Threads: 51},
		{Time: at.Add(time.Second), Elapsed: 2500 * time.Millisecond, CPUPercent: 0, RSSKiB: 4480, PSSKiB: -1, Threads: 1},
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(procstat.CSVHeader())
	for _, s := range samples {
		w.Write(s.CSVRecord())
	}
	w.Flush()
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	want := [][]string{
		{"timestamp", "elapsed_s", "cpu_percent", "rss_kib", "pss_kib", "threads"},
		{"2026-03-04T05:06:07.890Z", "1.500", "12.3", "4480", "1370", "51"},
		{"2026-03-04T05:06:08.890Z", "2.500", "0.0", "4480", "", "1"},
	}
	assert.Equal(t, want, rows, "CSV of %+v", samples)
}

func TestSummary(t *testing.T) {
	var sum procstat.Summary
	cpu := []float64{10, 30, 20}
	for i, c := range cpu {
		sum.Add(procstat.Sample{CPUPercent: c, RSSKiB: int64(1000 * (i + 1)), PSSKiB: -1, Threads: 3 - i})
	}
	want := procstat.Summary{Samples: 3, CPUMean: 20, CPUMax: 30, RSSMaxKiB: 3000, PSSMaxKiB: -1, ThreadsMax: 3}
	assert.Equal(t, want, sum, "summary of CPU %v", cpu)
}
