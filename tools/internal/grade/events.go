package grade

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
)

// Event is one line of `go tool test2json` output (see `go doc test2json`).
type Event struct {
	Time    time.Time `json:",omitzero"`
	Action  string    // start, run, pause, cont, pass, fail, skip, output, …
	Package string    `json:",omitempty"`
	Test    string    `json:",omitempty"`
	Elapsed float64   `json:",omitempty"` // seconds
	Output  string    `json:",omitempty"`
}

// The bounds on what the grader keeps of one exercise's test output, so
// that a test that prints without end, or a student's error whose text is
// megabytes long (printed again by every check that fails on it), costs
// the grader a few megabytes, never memory in proportion:
//
//   - maxKeptOutput: output kept whole; past it only the lines that decide
//     the verdict (markers: a panic, a race, a leak, a timeout) are kept,
//   - as an excerpt of maxMarkerExcerpt bytes around the marker,
//   - at most maxMarkerEvents of them;
//   - maxLine: a longer line (one test2json event) is cut there;
//   - maxEvents: events of any kind kept in all.
const (
	maxKeptOutput    = 4 << 20
	maxMarkerExcerpt = 4 << 10
	maxMarkerEvents  = 1000
	maxLine          = 1 << 20
	maxEvents        = 100_000
)

// readEvents decodes a test2json stream. A line that is not JSON (test2json
// reporting its own trouble, say) is kept as package output rather than
// dropped, so that it can explain a run that went wrong. What it keeps is
// bounded (maxKeptOutput and the others).
func readEvents(r io.Reader) ([]Event, error) {
	var (
		events  []Event
		kept    int // bytes of output kept whole
		markers int // marker excerpts kept past maxKeptOutput
		br      = bufio.NewReaderSize(r, 64<<10)
	)
	for {
		line, err := readLine(br, maxLine)
		if trimmed := strings.TrimSpace(line); trimmed != "" && len(events) < maxEvents {
			ev := parseEvent(trimmed)
			switch {
			case ev.Action != "output" || kept < maxKeptOutput:
				kept += len(ev.Output)
				events = append(events, ev)
			case markers < maxMarkerEvents && hasMarker(ev.Output):
				markers++
				ev.Output = markerExcerpt(ev.Output)
				events = append(events, ev)
			}
		}
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
	}
}

// readLine reads one line, newline included, keeping at most limit bytes
// of it: the rest of a longer line is read and dropped.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var b strings.Builder
	for {
		chunk, err := br.ReadSlice('\n')
		if room := limit - b.Len(); room > 0 {
			b.Write(chunk[:min(len(chunk), room)])
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return b.String(), err
		}
	}
}

// markerExcerpt is the part of s around its first verdict marker, at most
// maxMarkerExcerpt bytes: what the classifier and the report need of it.
func markerExcerpt(s string) string {
	if len(s) <= maxMarkerExcerpt {
		return s
	}
	at := len(s)
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && i < at {
			at = i
		}
	}
	from := max(0, min(at-maxMarkerExcerpt/4, len(s)-maxMarkerExcerpt))
	return s[from:from+maxMarkerExcerpt] + "\n"
}

func parseEvent(line string) Event {
	var ev Event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil || ev.Action == "" {
		return Event{Action: "output", Output: line + "\n"}
	}
	return ev
}
