//go:build !judge

package jobserver_test

import (
	"cmp"
	"io"

	jobserver "serverlab/chapters/03"
	"serverlab/tests/jobtest"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

// impl hands this chapter's package to the suite in tests/jobtest.
var impl = jobtest.Impl{
	Parse: func(line []byte) (jobtest.Request, error) {
		r, err := jobserver.Parse(line)
		return jobtest.Request{Command: r.Cmd.String(), N: r.N, Text: r.Text}, err
	},
	NewLineReader: func(r io.Reader) func() ([]byte, error) { return jobserver.NewLineReader(r).Next },
	NewQueue:      func(capacity int) jobtest.Queue { return jobserver.NewBoundedQueue[int](capacity) },
	NewBytesQueue: func(capacity int) jobtest.BytesQueue { return jobserver.NewBoundedQueue[[]byte](capacity) },
	StartPool: func(workers, capacity int, work func(worker, item int)) (jobtest.Queue, func()) {
		q := jobserver.NewBoundedQueue[int](capacity)
		return q, jobserver.NewPool(workers, q, work).Wait
	},
	NewServer: func(c jobtest.Config) (lab.Server, error) {
		return jobserver.New(jobserver.Config{Workers: c.Workers, QueueCap: c.QueueCap,
			WriteTimeout: c.WriteTimeout, MaxPending: c.MaxPending, Logger: cmp.Or(c.Logger, testkit.Logger()),
			OnLineRead: c.OnLineRead, OnJobStart: c.OnJobStart, OnFastWrite: c.OnFastWrite})
	},
	Stats: func(s lab.Server) jobtest.Stats { return jobtest.Stats(s.(*jobserver.Server).Stats()) },
}
