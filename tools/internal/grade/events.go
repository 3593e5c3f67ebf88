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

// maxKeptOutput bounds the test output the grader keeps for one exercise. A
// test that prints without end must not exhaust memory; past the bound only
// the lines that decide the verdict (markers) are kept.
const maxKeptOutput = 4 << 20

// readEvents decodes a test2json stream. A line that is not JSON (test2json
// reporting its own trouble, say) is kept as package output rather than
// dropped, so that it can explain a run that went wrong.
func readEvents(r io.Reader) ([]Event, error) {
	var (
		events []Event
		kept   int
		br     = bufio.NewReaderSize(r, 64<<10)
	)
	for {
		line, err := br.ReadString('\n')
		if trimmed := strings.TrimSpace(line); trimmed != "" {
			ev := parseEvent(trimmed)
			if ev.Action != "output" || kept < maxKeptOutput || hasMarker(ev.Output) {
				kept += len(ev.Output)
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

func parseEvent(line string) Event {
	var ev Event
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &ev) != nil || ev.Action == "" {
		return Event{Action: "output", Output: line + "\n"}
	}
	return ev
}
