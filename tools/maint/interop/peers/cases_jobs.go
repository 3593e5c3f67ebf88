//go:build linux

// Cases of chapter 03: ThreadForge's load_test against the course's job
// server, and loadgen jobs against ThreadForge.

package main

import (
	"context"
	"strconv"
	"strings"
)

// ---- chapter 03 and ThreadForge ----

func (h *harness) startOurJobserver(ctx context.Context) (*proc, string, error) {
	return h.startOnFreePort(ctx, "", h.ours("jobserver"), "-addr", "{addr}", "-workers", "2", "-queue", "256")
}

func (h *harness) startThreadForge(ctx context.Context) (*proc, string, error) {
	return h.startOnFreePort(ctx, "", h.peer(tfServer), "{port}", "2", "256")
}

func tfLoadTestCase(workload string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		p, port, err := h.startOurJobserver(ctx)
		if err != nil {
			return "", err
		}
		defer p.stop()
		const clients, each = 50, 4
		out, err := h.command(ctx, "", nil, h.peer(tfLoadTest), "--host", "127.0.0.1", "--port", port,
			"--clients", strconv.Itoa(clients), "--requests-per-client", strconv.Itoa(each), "--workload", workload)
		if err != nil && !strings.Contains(out, "failures=") {
			return "", err
		}
		ev, verr := loadTestVerdict(out, clients*each)
		return serverAlive(p, ev, verr)
	}
}

func loadgenJobsCase(workload string) func(context.Context, *harness) (string, error) {
	return func(ctx context.Context, h *harness) (string, error) {
		p, port, err := h.startThreadForge(ctx)
		if err != nil {
			return "", err
		}
		defer p.stop()
		out, err := h.command(ctx, "", nil, h.ours("loadgen"), "jobs", "-addr", "127.0.0.1:"+port,
			"-clients", "8", "-requests", "20", "-workload", workload, "-json", "-quiet", "-timeout", "5s", "-duration", "15s")
		if err != nil && !strings.Contains(out, "{") {
			return "", err
		}
		ev, verr := loadgenVerdict(out)
		return serverAlive(p, ev, verr)
	}
}
