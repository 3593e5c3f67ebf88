package jobserver_test

import (
	"cmp"
	"io"
	"testing"

	jobserver "serverlab/solutions/03"
	"serverlab/tests/jobtest"
	"serverlab/tests/testkit"
	"serverlab/tools/lab"
)

// impl hands this chapter's package to the suite in tests/jobtest.
var impl = jobtest.Impl{
	Parse: func(line []byte) (jobtest.Request, error) {
		r, err := jobserver.Parse(line)
		return jobtest.Request{Command: r.Cmd.String(), N: r.N, Text: r.Text}, err
	},
	NewLineReader: func(r io.Reader) func() ([]byte, error) { return jobserver.NewLineReader(r).Next },
	NewQueue:      func(capacity int) jobtest.Queue { return jobserver.NewBoundedQueue[int](capacity) },
	StartPool: func(workers, capacity int, work func(worker, item int)) (jobtest.Queue, func()) {
		q := jobserver.NewBoundedQueue[int](capacity)
		return q, jobserver.NewPool(workers, q, work).Wait
	},
	NewServer: func(c jobtest.Config) (lab.Server, error) {
		return jobserver.New(jobserver.Config{Workers: c.Workers, QueueCap: c.QueueCap,
			WriteTimeout: c.WriteTimeout, MaxPending: c.MaxPending, Logger: cmp.Or(c.Logger, testkit.Logger()),
			OnLineRead: c.OnLineRead, OnJobStart: c.OnJobStart})
	},
	Stats: func(s lab.Server) jobtest.Stats { return jobtest.Stats(s.(*jobserver.Server).Stats()) },
}

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx3_1_Parse(t *testing.T)        { jobtest.Parse(t, impl) }
func TestEx3_2_BoundedQueue(t *testing.T) { jobtest.BoundedQueue(t, impl) }
func TestEx3_3_Pool(t *testing.T)         { jobtest.Pool(t, impl) }
func TestEx3_4_Server(t *testing.T)       { jobtest.Server(t, impl) }
func TestEx3_5_BackPressure(t *testing.T) { jobtest.BackPressure(t, impl) }
func TestEx3_6_Shutdown(t *testing.T)     { jobtest.Shutdown(t, impl) }
func TestEx3_7_Statistics(t *testing.T)   { jobtest.Statistics(t, impl) }
func BenchmarkServer(b *testing.B)        { jobtest.Benchmark(b, impl) }

func FuzzParse(f *testing.F)      { jobtest.FuzzParse(f, impl) }
func FuzzLineReader(f *testing.F) { jobtest.FuzzLineReader(f, impl) }
