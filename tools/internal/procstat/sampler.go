package procstat

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Sample is one row of a monitoring run: the process's CPU use over the
// interval that ends at Time, and its memory and threads at Time.
type Sample struct {
	Time       time.Time
	Elapsed    time.Duration // since the Sampler started
	CPUPercent float64       // percent of one CPU over the interval (100 = one core busy)
	RSSKiB     int64
	PSSKiB     int64 // -1 when not readable
	Threads    int
}

// Sampler turns successive snapshots of one process into Samples.
type Sampler struct {
	pid         int
	start, prev Snapshot
	read        func(pid int) (Snapshot, error)
}

// NewSampler takes the first snapshot of pid, from which the first Sample's
// CPU% is measured.
func NewSampler(pid int) (*Sampler, error) {
	return newSampler(pid, Read)
}

func newSampler(pid int, read func(int) (Snapshot, error)) (*Sampler, error) {
	first, err := read(pid)
	if err != nil {
		return nil, err
	}
	return &Sampler{pid: pid, start: first, prev: first, read: read}, nil
}

// Sample takes a snapshot and returns it with the CPU% since the previous one.
// It returns an error wrapping ErrExited once the process is gone.
func (s *Sampler) Sample() (Sample, error) {
	cur, err := s.read(s.pid)
	if err != nil {
		return Sample{}, err
	}
	sample := Sample{
		Time:       cur.Time,
		Elapsed:    cur.Time.Sub(s.start.Time),
		CPUPercent: CPUPercent(s.prev, cur),
		RSSKiB:     cur.RSSKiB,
		PSSKiB:     cur.PSSKiB,
		Threads:    cur.Threads,
	}
	s.prev = cur
	return sample, nil
}

// Run samples pid every interval and passes each Sample to emit, until the
// process exits or ctx is done (both return nil: they are how a monitoring run
// ends), or emit or a read fails (that error is returned). The first sample
// comes one interval after the start. A process that is not there at the start
// is an error wrapping ErrExited.
func Run(ctx context.Context, pid int, interval time.Duration, emit func(Sample) error) error {
	if interval <= 0 {
		return errors.New("procstat: interval must be positive")
	}
	s, err := NewSampler(pid)
	if err != nil {
		return err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		sample, err := s.Sample()
		if err != nil {
			return ended(err)
		}
		if err := emit(sample); err != nil {
			return err
		}
	}
}

// ended treats the process's exit as the normal end of sampling.
func ended(err error) error {
	if errors.Is(err, ErrExited) {
		return nil
	}
	return err
}

// CSVHeader is the header row matching Sample.CSVRecord.
func CSVHeader() []string {
	return []string{"timestamp", "elapsed_s", "cpu_percent", "rss_kib", "pss_kib", "threads"}
}

// CSVRecord returns s as a CSV row: an RFC 3339 timestamp with milliseconds,
// seconds since the start, and an empty pss_kib when PSS was not readable.
func (s Sample) CSVRecord() []string {
	pss := ""
	if s.PSSKiB >= 0 {
		pss = strconv.FormatInt(s.PSSKiB, 10)
	}
	return []string{
		s.Time.Format("2006-01-02T15:04:05.000Z07:00"),
		strconv.FormatFloat(s.Elapsed.Seconds(), 'f', 3, 64),
		strconv.FormatFloat(s.CPUPercent, 'f', 1, 64),
		strconv.FormatInt(s.RSSKiB, 10),
		pss,
		strconv.Itoa(s.Threads),
	}
}

// Summary condenses a run's samples into the figures a results table quotes.
// The zero value is empty; Add each sample.
type Summary struct {
	Samples    int
	CPUMean    float64 // mean of the samples' CPU% (equal intervals, so the run's CPU%)
	CPUMax     float64
	RSSMaxKiB  int64
	PSSMaxKiB  int64 // -1 if PSS was never readable
	ThreadsMax int
}

// Add folds one sample into the summary.
func (m *Summary) Add(s Sample) {
	if m.Samples == 0 {
		m.PSSMaxKiB = -1
	}
	m.Samples++
	m.CPUMean += (s.CPUPercent - m.CPUMean) / float64(m.Samples)
	m.CPUMax = max(m.CPUMax, s.CPUPercent)
	m.RSSMaxKiB = max(m.RSSMaxKiB, s.RSSKiB)
	m.PSSMaxKiB = max(m.PSSMaxKiB, s.PSSKiB)
	m.ThreadsMax = max(m.ThreadsMax, s.Threads)
}
