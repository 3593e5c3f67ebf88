package grade

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSelectChapters(t *testing.T) {
	chapters, err := SelectChapters("../../cmd/grade/testdata/rubric.json", " 3, 01,01")
	if err != nil {
		t.Fatalf("SelectChapters: %v", err)
	}
	var ids []string
	for _, ch := range chapters {
		ids = append(ids, ch.ID)
	}
	if got := strings.Join(ids, ","); got != "03,01" {
		t.Errorf("-ch \" 3, 01,01\" selects %s, want 03,01 (in the order given, once each)", got)
	}
	all, err := SelectChapters("", "")
	if err != nil || len(all) == 0 {
		t.Errorf("SelectChapters of the embedded rubric = %d chapters, %v; want every chapter", len(all), err)
	}
}

// The grader alone sets GORACE and the role: a caller's (or a student's
// shell's) GORACE=exitcode=0 must not tell the race detector to keep quiet.
func TestRaceEnvIsTheGradersOwn(t *testing.T) {
	env := raceEnv([]string{"HOME=/root", "GORACE=halt_on_error=0 exitcode=0", "SERVERLAB_JUDGE_ROLE=judge"})
	want := []string{"HOME=/root", "GORACE=atexit_sleep_ms=0"}
	if strings.Join(env, "|") != strings.Join(want, "|") {
		t.Errorf("raceEnv = %q, want %q", env, want)
	}
}

// Without cgo the race detector cannot work: the grader says what to do
// instead of failing every chapter's build.
func TestCheckCgo(t *testing.T) {
	if msg := checkCgo(t.Context(), "../../.."); msg != "" {
		t.Skipf("this machine cannot build with -race: %s", msg)
	}
	t.Run("cgo off", func(t *testing.T) {
		t.Setenv("CGO_ENABLED", "0")
		if msg := checkCgo(t.Context(), "../../.."); !strings.Contains(msg, "needs cgo, and cgo is off") {
			t.Errorf("checkCgo = %q, want it to say cgo is off and what to do", msg)
		}
	})
	t.Run("no C compiler", func(t *testing.T) {
		t.Setenv("CC", "serverlab-no-such-cc")
		msg := checkCgo(t.Context(), "../../..")
		if !strings.Contains(msg, `"serverlab-no-such-cc" (go env CC) is not on PATH`) || !strings.Contains(msg, "apt-get install gcc") {
			t.Errorf("checkCgo = %q, want it to name the missing compiler and how to install one", msg)
		}
	})
}

// An exercise whose time limit no longer fits in what is left of the budget
// is not started; one that fits in part runs with a shorter limit.
func TestRunJobBudget(t *testing.T) {
	var done sync.WaitGroup
	res := &ExerciseResult{ID: "1.4"}
	done.Add(1)
	runJob(t.Context(), &runner{}, job{
		exercise: exercise{test: "TestEx1_4_Hang"}, limit: 40 * time.Second,
		result: res, done: &done, deadline: time.Now().Add(3 * time.Second), budget: 9 * time.Minute,
	})
	done.Wait()
	if res.Cause != CauseNotRun || !strings.Contains(res.Message, "ran out before this exercise could run") {
		t.Errorf("cause %q, message %q; want not run for lack of budget", res.Cause, res.Message)
	}
}
