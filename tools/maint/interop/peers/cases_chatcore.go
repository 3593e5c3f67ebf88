//go:build linux

// Cases of chapters 07 and 08: chatcore's own load tester against the
// course's servers, and, in the same run, against the original server, which
// the course's loadgen also drives.

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Where the original chatcore's programs are under -peers (docs/interop.md).
const (
	chatcoreServer = "chatcore/build/apps/server/chatcore-server"
	chatcoreTester = "chatcore/build/apps/load-tester/chatcore-load-tester"
)

// chatcoreClients is how many testers each case runs: the original's
// write-up measures 5 to 450; 100 is the largest step its own server served
// without a failure on this machine (docs/chatcore.md §8), so that a failure
// here is interop, not load. CHATCORE_CLIENTS sets another (450 is the
// write-up's largest burst: see docs/chatcore.md §8 for what it costs).
func chatcoreClients() int {
	if n, err := strconv.Atoi(os.Getenv("CHATCORE_CLIENTS")); err == nil && n > 0 {
		return n
	}
	return 100
}

func init() {
	ours["chatcore07"] = "./solutions/07/cmd/chatcore-server"
	ours["chatscale08"] = "./solutions/08/cmd/chatscale-server"
}

// chatcoreCases are the chatcore rows of the table, wired into
// interopCases by one line.
func chatcoreCases() []kase {
	n := chatcoreClients()
	tester := fmt.Sprintf("chatcore-load-tester %d", n)
	return []kase{
		{name: tester + " → ch07 chatcore-server", group: groupHost, needs: []string{chatcoreTester},
			run: chatcoreTesterCase(n, "chatcore07", true)},
		{name: tester + " → ch08 chatscale-server", group: groupHost, needs: []string{chatcoreTester},
			run: chatcoreTesterCase(n, "chatscale08", true)},
		{name: tester + " → original chatcore-server", group: groupHost, needs: []string{chatcoreTester, chatcoreServer},
			run: chatcoreTesterCase(n, "", false)},
		{name: fmt.Sprintf("loadgen chatcore %d → original chatcore-server", n), group: groupHost, needs: []string{chatcoreServer},
			run: loadgenChatcoreCase(n)},
	}
}

// startChatcore starts one of the course's servers (by its name in ours) or,
// for "", the original, on a free port with a fresh database in its own
// folder (the original writes ./logs/chat.log beside it).
func (h *harness) startChatcore(ctx context.Context, which string) (*proc, string, error) {
	dir, err := h.tempDir("chatcore")
	if err != nil {
		return nil, "", err
	}
	bin := h.peer(chatcoreServer)
	level := "warning" // the original's name for it
	if which != "" {
		bin, level = h.ours(which), "warn"
	}
	return h.startOnFreePort(ctx, dir, bin, "--ip", "127.0.0.1", "--port", "{port}",
		"--db", filepath.Join(dir, "chat.db"), "--log", level)
}

// chatcoreTesterCase runs the original load tester with n clients against a
// fresh server. Against the course's servers every message must come back
// (strict); the original server is the comparison, where the tester only has
// to get through (its late echoes are the original's, and are reported).
func chatcoreTesterCase(n int, which string, strict bool) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		p, port, err := h.startChatcore(ctx, which)
		if err != nil {
			return "", err
		}
		defer p.stop()
		dir, err := h.tempDir("chatcore-load-tester") // it writes ./logs/chat.log
		if err != nil {
			return "", err
		}
		// Its exit status is always 0, even after an error: the report decides.
		out, _ := h.command(ctx, dir, nil, h.peer(chatcoreTester), "--ip", "127.0.0.1", "--port", port,
			"--clients", strconv.Itoa(n))
		ev, verr := chatcoreTesterVerdict(out, strict)
		return serverAlive(p, ev, verr)
	}
}

func loadgenChatcoreCase(n int) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		p, port, err := h.startChatcore(ctx, "")
		if err != nil {
			return "", err
		}
		defer p.stop()
		out, err := h.command(ctx, "", nil, h.ours("loadgen"), "chatcore", "-addr", "127.0.0.1:"+port,
			"-clients", strconv.Itoa(n), "-quiet")
		if err != nil && !strings.Contains(out, "| Clients |") {
			return "", err
		}
		ev, verr := loadgenChatcoreVerdict(out, n)
		return serverAlive(p, ev, verr)
	}
}

var chatcoreReportLine = regexp.MustCompile(`\[info\] (total sent|total completed|total failed|p50|p95|p99|max): (\d+)`)

// chatcoreTesterVerdict judges the original load tester's spdlog report
// (docs/chatcore.md §6): it quits at its first error — a refused or timed-out
// registration, login or join — without a report, so an [error] line or a
// missing "total sent" is a failure whatever the exit status. strict also
// fails on any message that did not come back within the test.
func chatcoreTesterVerdict(out string, strict bool) (string, error) {
	got := map[string]int{}
	for _, m := range chatcoreReportLine.FindAllStringSubmatch(out, -1) {
		got[m[1]], _ = strconv.Atoi(m[2])
	}
	var errs []string
	for _, line := range strings.Split(out, "\n") {
		if _, msg, ok := strings.Cut(line, "[error] "); ok {
			errs = append(errs, strings.TrimSpace(msg))
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("the tester quit before its report: %d error lines, first %q%s", len(errs), errs[0], chatcoreLikelyCause(errs[0]))
	}
	sent, ok := got["total sent"]
	if !ok || sent == 0 {
		return "", fmt.Errorf("no report from the tester (expected \"total sent: N\"): %q", tail(out, 200))
	}
	ev := fmt.Sprintf("sent %d, completed %d, failed %d, p50 %d µs, p99 %d µs, max %d µs",
		sent, got["total completed"], got["total failed"], got["p50"], got["p99"], got["max"])
	if strict && got["total failed"] != 0 {
		return "", fmt.Errorf("%s (want 0 failed: echoes that did not come back within the tester's 10 s)", ev)
	}
	return ev, nil
}

// loadgenChatcoreVerdict judges loadgen chatcore's one table row: every tester
// must have logged in and joined ("Not ready" 0); late echoes (Failed) are
// the server's speed, reported, not a failure of interop.
func loadgenChatcoreVerdict(out string, n int) (string, error) {
	prefix := fmt.Sprintf("| %d |", n)
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Split(strings.Trim(line, "| "), "|")
		if len(f) != 8 {
			break
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		ev := fmt.Sprintf("sent %s, failed %s, p50 %s µs, p99 %s µs, not ready %s", f[1], f[2], f[3], f[5], f[7])
		if f[7] != "0" || f[1] == "0" {
			return "", fmt.Errorf("%s (want every tester ready and sending)", ev)
		}
		return ev, nil
	}
	return "", fmt.Errorf("no table row for %d clients in loadgen's output: %q", n, tail(out, 200))
}

// chatcoreLikelyCause explains the tester's usual last words. It takes any
// error of its registration for "the user exists" and logs in anyway, so a
// registration refused as Server busy. shows as a wrong password.
func chatcoreLikelyCause(first string) string {
	switch {
	case strings.Contains(first, "Server busy."), strings.Contains(first, "Wrong username or password"):
		return " (likely cause: registrations answered Server busy.: the new users' password hashes did not fit" +
			" in the tester's 10 s on the CPU this server got; the tester logs in after a refused registration)"
	case strings.Contains(first, "timed out"):
		return " (likely cause: a request waited more than the tester's 10 s)"
	}
	return ""
}
