package main

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestUsageListsTheExperiments(t *testing.T) {
	var out, errs strings.Builder
	if code := run(context.Background(), []string{"help"}, &out, &errs); code != 0 {
		t.Fatalf("bench help exited %d: %s", code, errs.String())
	}
	for _, name := range []string{"chat", "c10k"} {
		if !strings.Contains(out.String(), "  "+name+" ") {
			t.Errorf("bench help does not list %s:\n%s", name, out.String())
		}
	}
}

func TestUnknownExperimentIsAUsageError(t *testing.T) {
	var out, errs strings.Builder
	if code := run(context.Background(), []string{"nope"}, &out, &errs); code != 2 {
		t.Errorf("bench nope exited %d, want 2", code)
	}
	if !strings.Contains(errs.String(), `unknown experiment "nope"`) {
		t.Errorf("stderr does not name the mistake: %s", errs.String())
	}
}

func TestCommandReproducesTheFlags(t *testing.T) {
	f := newFlags("chat", "docs/bench-chat", 3)
	if err := f.parse([]string{"-rounds", "5", "-peers", "/p", "-out", "docs/x"}); err != nil {
		t.Fatal(err)
	}
	want := "PEERS=/p go run ./tools/cmd/bench chat -out docs/x -rounds 5"
	if got := f.command(); got != want {
		t.Errorf("command() = %q, want %q", got, want)
	}
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-rounds", "0"}, {"extra"}, {"-no-such-flag"}} {
		f := newFlags("chat", "docs/bench-chat", 3)
		f.SetOutput(new(strings.Builder))
		if err := f.parse(args); !isUsage(err) {
			t.Errorf("parse(%q) = %v, want a usage error", args, err)
		}
	}
}

func isUsage(err error) bool {
	_, ok := err.(usageError)
	return ok
}

func TestFailReportsTheMistake(t *testing.T) {
	f := newFlags("c10k", "docs/bench-ch05", 1)
	var out strings.Builder
	f.SetOutput(&out)
	if err := f.fail(errors.New("-rate 0: want more")); !isUsage(err) {
		t.Errorf("fail returned %v, want a usage error", err)
	}
	if want := "bench c10k: -rate 0: want more\n"; out.String() != want {
		t.Errorf("fail printed %q, want %q", out.String(), want)
	}
}
