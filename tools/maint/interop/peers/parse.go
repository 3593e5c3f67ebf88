//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The parsers below read the reports of the originals' tools and of the
// Debian ones. Each returns an error that quotes what it could not find, so
// a failing case says why.

// keyValues reads "a=1 b=2" words from every line (ThreadForge's load_test
// prints its totals that way); a later key overrides an earlier one.
func keyValues(out string) map[string]string {
	kv := map[string]string{}
	for _, w := range strings.Fields(out) {
		if k, v, ok := strings.Cut(w, "="); ok && k != "" {
			kv[k] = v
		}
	}
	return kv
}

// loadTestVerdict judges ThreadForge's load_test report: every request must
// succeed, and the totals must be there.
func loadTestVerdict(out string, want int) (string, error) {
	kv := keyValues(out)
	total, okT := atoi(kv["total_requests"])
	succ, okS := atoi(kv["successes"])
	failures, okF := atoi(kv["failures"])
	if !okT || !okS || !okF {
		return "", fmt.Errorf("no total_requests=/successes=/failures= in the report: %q", tail(out, 200))
	}
	ev := fmt.Sprintf("total_requests=%d successes=%d failures=%d", total, succ, failures)
	if thr, ok := kv["throughput_requests_per_second"]; ok {
		ev += ", " + thr + " req/s"
	}
	if failures != 0 || succ != want || total != want {
		return "", fmt.Errorf("%s (want %d successes)", ev, want)
	}
	return ev, nil
}

// loadgenResult is the part of `loadgen -json` the cases judge.
type loadgenResult struct {
	Successes  int64             `json:"successes"`
	Failures   int64             `json:"failures"`
	Errors     map[string]int64  `json:"errors"`
	Examples   map[string]string `json:"examples"`
	Throughput float64           `json:"throughput_rps"`
	P99        float64           `json:"p99_ms"`
}

// loadgenVerdict judges one `loadgen <mode> -json` run: at least one success
// and no failure. The JSON object is the last line that starts with '{'.
func loadgenVerdict(out string) (string, error) {
	var r loadgenResult
	found := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &r) == nil {
			found = true
		}
	}
	if !found {
		return "", fmt.Errorf("no JSON result in loadgen's output: %q", tail(out, 200))
	}
	ev := fmt.Sprintf("%d ok, %d failed, %.0f req/s, p99 %.2f ms", r.Successes, r.Failures, r.Throughput, r.P99)
	if len(r.Errors) > 0 {
		var kinds []string
		for _, k := range sortedKeys(r.Errors) {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, r.Errors[k]))
		}
		ev += "; errors " + strings.Join(kinds, " ")
		for _, k := range sortedKeys(r.Examples) {
			ev += fmt.Sprintf("; e.g. %s: %s", k, r.Examples[k])
			break
		}
	}
	if r.Failures != 0 || r.Successes == 0 {
		return "", fmt.Errorf("%s", ev)
	}
	return ev, nil
}

var (
	wrkRequests = regexp.MustCompile(`(\d+) requests in ([0-9.]+\w+)`)
	wrkRate     = regexp.MustCompile(`Requests/sec:\s*([0-9.]+)`)
	wrkSocket   = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// wrkVerdict judges a wrk report: requests were made, none answered
// with a non-2xx status, and no socket error of any kind.
func wrkVerdict(out string) (string, error) {
	m := wrkRequests.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no \"N requests in T\" line in wrk's report: %q", tail(out, 200))
	}
	ev := m[1] + " requests in " + m[2]
	if r := wrkRate.FindStringSubmatch(out); r != nil {
		ev += ", " + r[1] + " req/s"
	}
	bad := false
	if s := wrkSocket.FindStringSubmatch(out); s != nil {
		ev += ", " + s[0]
		bad = s[1] != "0" || s[2] != "0" || s[3] != "0" || s[4] != "0"
	} else {
		ev += ", no socket errors"
	}
	if n := wrkNon2xx.FindStringSubmatch(out); n != nil {
		ev += ", " + n[0]
		bad = true
	}
	if m[1] == "0" || bad {
		return "", fmt.Errorf("wrk: %s", ev)
	}
	return "wrk: " + ev, nil
}

var (
	httperfErrors = regexp.MustCompile(`Errors: total (\d+)`)
	httperfStatus = regexp.MustCompile(`Reply status: 1xx=(\d+) 2xx=(\d+) 3xx=(\d+) 4xx=(\d+) 5xx=(\d+)`)
	httperfRate   = regexp.MustCompile(`Request rate: ([0-9.]+) req/s`)
)

// httperfVerdict judges an httperf report: want 2xx replies and no error.
func httperfVerdict(out string, want int) (string, error) {
	e := httperfErrors.FindStringSubmatch(out)
	s := httperfStatus.FindStringSubmatch(out)
	if e == nil || s == nil {
		return "", fmt.Errorf("no \"Errors: total\" / \"Reply status\" lines in httperf's report: %q", tail(out, 200))
	}
	ev := fmt.Sprintf("httperf: 2xx=%s of %d, errors total %s", s[2], want, e[1])
	if r := httperfRate.FindStringSubmatch(out); r != nil {
		ev += ", " + r[1] + " req/s"
	}
	if e[1] != "0" || s[2] != strconv.Itoa(want) {
		return "", fmt.Errorf("%s", ev)
	}
	return ev, nil
}

var (
	chatLoadTotal = regexp.MustCompile(`Total latencies:\s*(\d+)`)
	chatLoadMean  = regexp.MustCompile(`mean\s*=\s*([0-9.]+) ms`)
	chatFailed    = regexp.MustCompile(`\[(load|stress|register|login)\] .*(failed|error|Error).*`)
)

// chatLoadVerdict judges the chat system's load_test.py: every client
// registered and logged in, and each of its messages got a delivery in time
// (the script times a message by the next broadcast the sender receives).
func chatLoadVerdict(out string, want int) (string, error) {
	if f := chatFailed.FindString(out); f != "" {
		return "", fmt.Errorf("load_test.py: %s", f)
	}
	m := chatLoadTotal.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no \"Total latencies\" in load_test.py's summary: %q", tail(out, 200))
	}
	ev := "load_test.py: Total latencies: " + m[1] + " of " + strconv.Itoa(want)
	if mean := chatLoadMean.FindStringSubmatch(out); mean != nil {
		ev += ", mean " + mean[1] + " ms"
	}
	if n, _ := strconv.Atoi(m[1]); n != want {
		return "", fmt.Errorf("%s", ev)
	}
	return ev, nil
}

var stressStep = regexp.MustCompile(`connected=(\d+)/(\d+)\s+delivered=(\d+)\s+failed_msgs=(\d+)\s+avg_lat=(\S+)`)

// stressVerdict judges stress_test.py: every step ran, every client
// connected, no message failed, and the script did not stop on degradation.
func stressVerdict(out string, steps int) (string, error) {
	if f := chatFailed.FindString(out); f != "" {
		return "", fmt.Errorf("stress_test.py: %s", f)
	}
	ms := stressStep.FindAllStringSubmatch(out, -1)
	if len(ms) == 0 {
		return "", fmt.Errorf("no \"connected=… delivered=… failed_msgs=…\" lines in stress_test.py's output: %q", tail(out, 200))
	}
	var parts []string
	bad := strings.Contains(out, "Degradation detected")
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s/%s conn %s delivered %s failed avg %s", m[1], m[2], m[3], m[4], m[5]))
		if m[1] != m[2] || m[4] != "0" {
			bad = true
		}
	}
	ev := "stress_test.py: " + strings.Join(parts, "; ")
	if bad || len(ms) != steps {
		return "", fmt.Errorf("%s (want %d clean steps)", ev, steps)
	}
	return ev, nil
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}
