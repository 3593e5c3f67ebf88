package jobtest

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// checkCountedWhenSent: an answer is counted before it is sent. A count
// made just after the send is wrong by nanoseconds: only a client that
// reads the answer and asks Stats inside them sees it, which the exact
// counts met about one run in two (wrong5's w03k). Config.OnFastWrite makes
// the order deterministic: send's non-blocking write (given code) calls it
// with the bytes the socket took while the goroutine that sent them waits,
// and the hook asks Stats then. The client sends one line at a time, so when
// the answer to job n is on its way every job up to n is answered:
// Completed + Failed must be n or more already, whoever answered (a worker,
// or the reader for a line that does not parse). An open-track server that never calls the hook
// leaves this check nothing to see.
func checkCountedWhenSent(k *testkit.T, impl Impl) {
	k.Helper()
	var (
		mu  sync.Mutex
		raw lab.Server // set once the server is built; the hook runs later
		bad = make(chan string, 1)
	)
	round := []string{"PRIME 7", "FOO", "HASH a", "PRIME 0", "SORT 100", "", "MATMUL 2", "PRIME  5"}
	hook := func(p []byte) {
		// The highest id among the whole answers written: one at a time,
		// every line before it has been answered too.
		var want uint64
		lines := bytes.Split(p, []byte{'\n'})
		for _, line := range lines[:len(lines)-1] { // the last is no whole line
			_, rest, _ := bytes.Cut(line, []byte{' '})
			num, _, _ := bytes.Cut(rest, []byte{' '})
			if id, err := strconv.ParseUint(string(num), 10, 64); err == nil {
				want = max(want, id)
			}
		}
		if want == 0 {
			return
		}
		mu.Lock()
		srv := raw
		mu.Unlock()
		if srv == nil {
			return
		}
		st := impl.Stats(srv)
		if st.Completed+st.Failed < want {
			select {
			case bad <- fmt.Sprintf("answer %d, to %q, was on its way to the client (%q: send's non-blocking write had "+
				"taken it), and Stats said %+v: Completed + Failed = %d, want %d or more", want, round[(want-1)%uint64(len(round))], p, st,
				st.Completed+st.Failed, want):
			default:
			}
		}
	}
	r, srv := newServer(k, impl, Config{Workers: 2, QueueCap: 4, OnFastWrite: hook})
	mu.Lock()
	raw = r
	mu.Unlock()
	c := k.Dial(srv)
	for range 4 {
		for _, line := range round {
			c.WriteLine(line)
			c.ReadLine()
		}
	}
	select {
	case msg := <-bad:
		k.Fatalf("a client sent one line at a time (valid and invalid, %d lines) and read each answer\n%s\n"+
			"hint: count an answer (completed or failed) before it is handed to send, in the worker and in the "+
			"reader alike: a client that holds an answer must find it in Stats", 4*len(round), msg)
	default:
	}
}
