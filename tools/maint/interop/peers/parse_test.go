//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures in testdata are these tools' real reports, recorded with this
// harness's -v (the failing ones edited from passing ones).

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The helpers print what was checked, what was wanted and what came.

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func equal[T comparable](t *testing.T, want, got T, what ...string) {
	t.Helper()
	if want != got {
		t.Errorf("%s\nwant: %#v\ngot:  %#v", strings.Join(what, " "), want, got)
	}
}

func errContains(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("want an error containing %q, got %v", want, err)
	}
}

func isErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Error("want an error, got nil")
	}
}

func TestLoadTestVerdict(t *testing.T) {
	out := fixture(t, "load_test-ok.txt")
	t.Run("all requests succeed", func(t *testing.T) {
		ev, err := loadTestVerdict(out, 200)
		noErr(t, err)
		equal(t, "total_requests=200 successes=200 failures=0, 6701.86 req/s", ev)
	})
	t.Run("fewer than asked for fails", func(t *testing.T) {
		_, err := loadTestVerdict(out, 400)
		errContains(t, err, "want 400 successes")
	})
	t.Run("failures fail", func(t *testing.T) {
		bad := strings.Replace(out, "successes=200 failures=0", "successes=190 failures=10", 1)
		_, err := loadTestVerdict(bad, 200)
		errContains(t, err, "failures=10")
	})
	t.Run("no report fails", func(t *testing.T) {
		_, err := loadTestVerdict("connect failed: Connection refused\n", 200)
		errContains(t, err, "no total_requests=")
	})
}

func TestLoadgenVerdict(t *testing.T) {
	t.Run("clean run", func(t *testing.T) {
		ev, err := loadgenVerdict("progress…\n" + `{"mode":"jobs","successes":160,"failures":0,"throughput_rps":4552.1,"p99_ms":3.75}` + "\n")
		noErr(t, err)
		equal(t, "160 ok, 0 failed, 4552 req/s, p99 3.75 ms", ev)
	})
	t.Run("bad replies are named with an example", func(t *testing.T) {
		_, err := loadgenVerdict(`{"successes":0,"failures":200,"errors":{"bad reply":200},"examples":{"bad reply":"sent \"show\\n\", got \"\\u001b[0m[show]\""}}`)
		errContains(t, err, "0 ok, 200 failed")
		errContains(t, err, "errors bad reply=200")
		errContains(t, err, `e.g. bad reply: sent "show\n"`)
	})
	t.Run("zero requests is not a pass", func(t *testing.T) {
		_, err := loadgenVerdict(`{"successes":0,"failures":0}`)
		isErr(t, err)
	})
	t.Run("no JSON", func(t *testing.T) {
		_, err := loadgenVerdict("loadgen: dial tcp: connection refused\n")
		errContains(t, err, "no JSON result")
	})
}

func TestWrkVerdict(t *testing.T) {
	ev, err := wrkVerdict(fixture(t, "wrk-ok.txt"))
	noErr(t, err)
	equal(t, "wrk: 30487 requests in 2.10s, 14519.32 req/s, no socket errors", ev)

	_, err = wrkVerdict(fixture(t, "wrk-read-errors.txt"))
	errContains(t, err, "Socket errors: connect 0, read 7210, write 0, timeout 0")

	_, err = wrkVerdict(fixture(t, "wrk-non2xx.txt"))
	errContains(t, err, "Non-2xx or 3xx responses: 1200")

	_, err = wrkVerdict("unable to connect to 127.0.0.1:1 Connection refused\n")
	errContains(t, err, "no \"N requests in T\" line")
}

func TestHTTPerfVerdict(t *testing.T) {
	out := fixture(t, "httperf-ok.txt")
	ev, err := httperfVerdict(out, 300)
	noErr(t, err)
	equal(t, "httperf: 2xx=300 of 300, errors total 0, 150.5 req/s", ev)

	_, err = httperfVerdict(out, 500)
	errContains(t, err, "2xx=300 of 500")

	bad := strings.Replace(out, "Errors: total 0 client-timo 0 socket-timo 0 connrefused 0 connreset 0",
		"Errors: total 3 client-timo 0 socket-timo 0 connrefused 0 connreset 3", 1)
	_, err = httperfVerdict(bad, 300)
	errContains(t, err, "errors total 3")
}

func TestChatLoadVerdict(t *testing.T) {
	out := fixture(t, "load_test_py-ok.txt")
	ev, err := chatLoadVerdict(out, 24)
	noErr(t, err)
	equal(t, "load_test.py: Total latencies: 24 of 24, mean 0.231 ms", ev)

	_, err = chatLoadVerdict(strings.Replace(out, "Total latencies: 24", "Total latencies: 20", 1), 24)
	errContains(t, err, "20 of 24")

	_, err = chatLoadVerdict("[load] loaduser3 login failed\n"+out, 24)
	errContains(t, err, "loaduser3 login failed")
}

func TestStressVerdict(t *testing.T) {
	out := fixture(t, "stress_test_py-ok.txt")
	ev, err := stressVerdict(out, 3)
	noErr(t, err)
	if !strings.HasPrefix(ev, "stress_test.py: 2/2 conn 6 delivered 0 failed avg 0.318ms; 6/6") {
		t.Errorf("evidence %q", ev)
	}

	_, err = stressVerdict(out, 4)
	errContains(t, err, "want 4 clean steps")

	_, err = stressVerdict(strings.Replace(out, "connected=6/6  delivered=18  failed_msgs=0", "connected=5/6  delivered=15  failed_msgs=3", 1), 3)
	errContains(t, err, "5/6 conn 15 delivered 3 failed")

	_, err = stressVerdict(out+"[stress] *** Degradation detected — stopping ***\n", 3)
	isErr(t, err)
}
