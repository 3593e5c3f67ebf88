package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"serverlab/tools/internal/chatload"
	"serverlab/tools/internal/chatload/chatloadtest"
	"serverlab/tools/internal/runner"
)

// The chat experiments' trials, against a relay that lets everyone in.
func TestChatTrial(t *testing.T) {
	tr := &runner.Trial{Server: "relay", Clients: 3, Addr: chatloadtest.StartRelay(t, 1000), Log: io.Discard}
	s := chatSettings{messages: 2, interval: time.Millisecond, size: 64, timeout: 2 * time.Second, engine: chatload.Goroutines}
	out, err := chatTrial(context.Background(), tr, s)
	if err != nil {
		t.Fatal(err)
	}
	// 3 clients × 2 messages, each to the 2 others.
	want := map[string]float64{"connected": 3, "connected_pct": 100, "sent": 6, "expected": 12, "lost": 0, "delivered_pct": 100, "successes": 12}
	for k, x := range want {
		if out.Values[k] != x {
			t.Errorf("%s = %v, want %v (all values: %v)", k, out.Values[k], x, out.Values)
		}
	}
	if out.Latency == nil || out.Latency.TotalCount() != 12 {
		t.Errorf("the latency histogram should hold the 12 deliveries, got %v", out.Latency)
	}
}

func TestC10KTrial(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	tr := &runner.Trial{Server: "relay", Clients: 3, Addr: chatloadtest.StartRelay(t, 1000), PID: os.Getpid(), Log: io.Discard}
	s := c10kSettings{rate: 20, size: 64, idle: 10 * time.Millisecond, active: 150 * time.Millisecond, engine: chatload.Goroutines}
	out, err := c10kTrial(context.Background(), tr, s)
	if err != nil {
		t.Fatal(err)
	}
	// 3 broadcasts, one from each client, each to the 2 others.
	want := map[string]float64{"logged_in": 3, "sent": 3, "expected": 6, "delivered_pct": 100}
	for k, x := range want {
		if out.Values[k] != x {
			t.Errorf("%s = %v, want %v (all values: %v)", k, out.Values[k], x, out.Values)
		}
	}
	if out.Values["idle_rss_kib"] <= 0 {
		t.Errorf("idle_rss_kib = %v, want it measured", out.Values["idle_rss_kib"])
	}
	// /proc counts CPU time in clock ticks (10 ms): a 150 ms trial of a
	// fast build may well use less than one, so only its presence is sure.
	if x, ok := out.Values["cpu_us_per_delivery"]; !ok || x < 0 {
		t.Errorf("cpu_us_per_delivery = %v (present: %v), want it measured (>= 0)", x, ok)
	}
}

// The active phase sends -rate broadcasts a second for -active, the
// clients taking turns, whatever their number.
func TestC10KPlan(t *testing.T) {
	s := c10kSettings{rate: 5, size: 64, active: 5 * time.Second}
	for _, c := range []struct {
		clients, senders, messages int
		interval                   time.Duration
	}{
		{2, 2, 12, 400 * time.Millisecond},
		{10, 10, 2, 2 * time.Second},
		{10000, 25, 1, 5 * time.Second},
	} {
		p := c10kPlan(s, c.clients)
		if p.Senders != c.senders || p.Messages != c.messages || p.Interval != c.interval || !p.Turns || p.Size != 64 {
			t.Errorf("%d clients: plan %+v, want %d senders × %d messages every %v, in turn", c.clients, p, c.senders, c.messages, c.interval)
		}
	}
}
