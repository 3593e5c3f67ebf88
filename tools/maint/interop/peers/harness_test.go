//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSkipReason(t *testing.T) {
	peers := t.TempDir()
	if err := os.MkdirAll(filepath.Join(peers, "threadforge/build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(peers, tfServer), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	with := newHarness(options{peers: peers}, &bytes.Buffer{})
	without := newHarness(options{}, &bytes.Buffer{})
	cases := []struct {
		name string
		h    *harness
		k    kase
		want string // "" = runs
	}{
		{"built original", with, kase{needs: []string{tfServer}}, ""},
		{"original not built", with, kase{needs: []string{tfLoadTest}}, "original not built: threadforge/build/load_test missing"},
		{"no -peers", without, kase{needs: []string{tfServer}}, "needs the original (threadforge): no -peers folder given"},
		{"needs nothing", without, kase{}, ""},
		{"tool missing", without, kase{tools: []string{"serverlab-no-such-tool"}}, "serverlab-no-such-tool is not installed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.h.skipReason(c.k)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("skipReason: want %q, got %q", c.want, got)
			}
		})
	}
}

func TestRunCaseAndTable(t *testing.T) {
	var log bytes.Buffer
	h := newHarness(options{timeout: time.Second}, &log)
	rs := []result{
		h.runCase(context.Background(), kase{name: "passes", run: func(context.Context, *harness) (string, error) {
			return "3 ok\nno errors", nil
		}}),
		h.runCase(context.Background(), kase{name: "fails", run: func(context.Context, *harness) (string, error) {
			return "", errors.New("server died | badly")
		}}),
		h.runCase(context.Background(), kase{name: "skips", run: func(context.Context, *harness) (string, error) {
			return "", errSkip("nothing to talk to")
		}}),
		h.runCase(context.Background(), kase{name: "times out", run: func(ctx context.Context, _ *harness) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}}),
	}
	want := []struct {
		st status
		ev string
	}{
		{pass, "3 ok no errors"},
		{fail, "server died | badly"},
		{skip, "nothing to talk to"},
		{fail, "context deadline exceeded (case time limit 1s reached)"},
	}
	for i, w := range want {
		if rs[i].Status != w.st || rs[i].Evidence != w.ev {
			t.Errorf("case %q: want %s %q, got %s %q", rs[i].Case, w.st, w.ev, rs[i].Status, rs[i].Evidence)
		}
	}
	var out bytes.Buffer
	printTable(&out, rs)
	for _, line := range []string{
		"| case      | result | evidence |",
		"| fails     | FAIL   | server died \\| badly |",
		"1 passed, 2 failed, 1 skipped",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("table lacks %q:\n%s", line, out.String())
		}
	}
	if !failed(rs) || failed(rs[:1]) {
		t.Error("failed() must see the FAIL rows, and only them")
	}
}
