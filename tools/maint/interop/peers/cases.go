//go:build linux

package main

import (
	"context"
	"path/filepath"
	"strings"
)

// Where the originals' programs are under -peers (the layout docs/interop.md lists).
const (
	tfServer   = "threadforge/build/threadforge_server"
	tfLoadTest = "threadforge/build/load_test"

	chatDiscovery = "chat/discovery_server"
	chatThreaded  = "chat/chat_server"
	chatSelect    = "chat/chat_server_select"
	chatClient    = "chat/chat_client"
	chatLoadPy    = "chat/monitoring/load_test.py"
	chatStressPy  = "chat/monitoring/stress_test.py"

	stockEvent  = "sg-syssw/concurrent_stockserver/event_driven/stockserver"
	stockThread = "sg-syssw/concurrent_stockserver/thread_based/stockserver"
	stockBench  = "sg-syssw/concurrent_stockserver/client/multiclient_benchmark"
	stockClient = "sg-syssw/concurrent_stockserver/client/stockclient"

	ostepServer = "ostep/concurrency-webserver/src/wserver"
	ostepClient = "ostep/concurrency-webserver/src/wclient"
	ostepSpin   = "ostep/concurrency-webserver/src/spin.cgi"
)

// The chat system's fixed ports (its programs have them compiled in).
const (
	discoveryAddr = "127.0.0.1:5000"
	chatAddr      = "127.0.0.1:6000"
)

// interopCases is every two-way case, in table order.
func interopCases() []kase {
	var cs []kase
	// Debian's HTTP clients against chapter 06: no original needed.
	cs = append(cs,
		kase{name: "curl → ch06 wserver", group: groupHost, tools: []string{"curl"}, run: curlCh06},
		kase{name: "wrk → ch06 wserver", group: groupHost, tools: []string{"wrk"}, run: wrkCh06},
		kase{name: "httperf → ch06 wserver", group: groupHost, tools: []string{"httperf"}, run: httperfCh06},
	)
	// Chapter 03: ThreadForge.
	for _, w := range []string{"prime", "sort", "matmul", "mixed"} {
		cs = append(cs, kase{name: "ThreadForge load_test " + w + " → ch03 jobserver", group: groupHost,
			needs: []string{tfLoadTest}, run: tfLoadTestCase(w)})
	}
	for _, w := range []string{"prime", "sort", "matmul", "mixed"} {
		cs = append(cs, kase{name: "loadgen jobs " + w + " → ThreadForge", group: groupHost,
			needs: []string{tfServer}, run: loadgenJobsCase(w)})
	}
	// Chapters 01, 02, 05: the chat system, on its fixed ports.
	for _, ch := range []string{"02", "05"} {
		cs = append(cs,
			kase{name: "chat load_test.py → ch01+ch" + ch, group: groupNetns, needs: []string{chatLoadPy}, tools: []string{"python3"}, run: chatLoadCase(ch)},
			kase{name: "chat stress_test.py → ch01+ch" + ch, group: groupNetns, needs: []string{chatStressPy}, tools: []string{"python3"}, run: chatStressCase(ch)},
			kase{name: "chat_client ×2 → ch01+ch" + ch, group: groupNetns, needs: []string{chatClient}, run: chatClientCase(ch)},
		)
	}
	for _, srv := range []string{chatThreaded, chatSelect} {
		label := filepath.Base(srv)
		cs = append(cs,
			kase{name: "tools/cmd/chat ×2 → discovery_server+" + label, group: groupNetns, needs: []string{chatDiscovery, srv}, run: toolsChatCase(srv)},
			kase{name: "loadgen chat → discovery_server+" + label, group: groupNetns, needs: []string{chatDiscovery, srv}, run: loadgenChatCase(srv)},
		)
	}
	cs = append(cs,
		kase{name: "chat_client display: original = ch02 = ch05", group: groupNetns, needs: []string{chatClient, chatDiscovery, chatThreaded}, run: chatDisplayCase},
		kase{name: "loadgen register → discovery_server", group: groupNetns, needs: []string{chatDiscovery}, run: loadgenRegisterCase},
	)
	for _, ch := range []string{"02", "05"} {
		cs = append(cs, kase{name: "users.txt of discovery_server → ch" + ch, group: groupNetns, needs: []string{chatDiscovery}, run: usersFileCase(ch)})
	}
	// Chapters 04, 05: the stock servers.
	for _, ch := range []string{"04", "05"} {
		cs = append(cs,
			kase{name: "multiclient_benchmark → ch" + ch + " stockserver", group: groupHost, needs: []string{stockBench}, run: stockBenchCase(ch)},
			kase{name: "stockclient → ch" + ch + " stockserver", group: groupHost, needs: []string{stockClient}, run: stockClientCase(ch)},
		)
	}
	for _, srv := range []string{stockEvent, stockThread} {
		cs = append(cs, kase{name: "loadgen stock → " + stockLabel(srv), group: groupHost, needs: []string{srv}, run: loadgenStockCase(srv)})
	}
	// Chapter 06: the OSTEP web server.
	cs = append(cs,
		kase{name: "wclient → ch06 wserver", group: groupHost, needs: []string{ostepClient}, run: wclientCase},
		kase{name: "loadgen http → OSTEP wserver", group: groupHost, needs: []string{ostepServer}, run: loadgenHTTPCase},
		kase{name: "spin.cgi (course) → OSTEP wserver", group: groupHost, needs: []string{ostepServer}, run: cgiSpinCase},
		kase{name: "env.cgi (course) → OSTEP wserver", group: groupHost, needs: []string{ostepServer}, run: cgiEnvCase},
	)
	cs = append(cs, kase{name: "loadgen tcp-echo", group: groupHost, run: func(context.Context, *harness) (string, error) {
		return "", errSkip("no original speaks the echo protocol (the mode is the course's own example)")
	}})
	cs = append(cs, chatcoreCases()...) // chapters 07, 08: cases_chatcore.go
	return cs
}

// errSkip turns a case into a skip with a reason.
type errSkip string

func (e errSkip) Error() string { return string(e) }

func stockLabel(srv string) string {
	if strings.Contains(srv, "thread_based") {
		return "original thread_based stockserver"
	}
	return "original event_driven stockserver"
}
