//go:build linux

package main

import (
	"strings"
	"testing"
)

// The chatcore fixtures are real reports: the original load tester at 450
// clients against the original server (late echoes) and against chapter 07
// (quit at a refused registration), and loadgen chatcore against chapter 07
// (testers not ready), all recorded on this machine on 2026-12-07.

func TestChatcoreTesterVerdict(t *testing.T) {
	late := fixture(t, "chatcore-load-tester-late.txt")
	t.Run("a report is enough against the original", func(t *testing.T) {
		ev, err := chatcoreTesterVerdict(late, false)
		noErr(t, err)
		equal(t, "sent 4050, completed 917, failed 3133, p50 4345805 µs, p99 7054999 µs, max 7133149 µs", ev)
	})
	t.Run("strict wants every echo", func(t *testing.T) {
		_, err := chatcoreTesterVerdict(late, true)
		errContains(t, err, "failed 3133")
		errContains(t, err, "want 0 failed")
	})
	t.Run("every echo back passes strict", func(t *testing.T) {
		ok := strings.Replace(strings.Replace(late, "total completed: 917", "total completed: 4050", 1), "total failed: 3133", "total failed: 0", 1)
		_, err := chatcoreTesterVerdict(ok, true)
		noErr(t, err)
	})
	t.Run("an error line is a quit tester, exit status 0 or not", func(t *testing.T) {
		_, err := chatcoreTesterVerdict(fixture(t, "chatcore-load-tester-quit.txt"), false)
		errContains(t, err, `first "[Server::Error][tester197] Wrong username or password"`)
		errContains(t, err, "likely cause: registrations answered Server busy.")
	})
	t.Run("no report", func(t *testing.T) {
		_, err := chatcoreTesterVerdict("[2026-12-07 15:34:06.799] [spdlog] [info] Starting initialization\n", false)
		errContains(t, err, `no report from the tester`)
	})
}

func TestLoadgenChatcoreVerdict(t *testing.T) {
	out := fixture(t, "loadgen-chatcore-notready.txt")
	t.Run("testers not ready fail", func(t *testing.T) {
		_, err := loadgenChatcoreVerdict(out, 450)
		errContains(t, err, "not ready 235")
	})
	t.Run("every tester ready passes, late echoes reported", func(t *testing.T) {
		ev, err := loadgenChatcoreVerdict(strings.Replace(out, "| 0 | 8756 | 20777 | 43611 | 66326 | 235 |", "| 3 | 8756 | 20777 | 43611 | 66326 | 0 |", 1), 450)
		noErr(t, err)
		equal(t, "sent 1935, failed 3, p50 8756 µs, p99 43611 µs, not ready 0", ev)
	})
	t.Run("no row for that count", func(t *testing.T) {
		_, err := loadgenChatcoreVerdict(out, 100)
		errContains(t, err, "no table row for 100 clients")
	})
}
