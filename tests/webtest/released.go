package webtest

import (
	"fmt"

	"serverlab/tests/testkit"
)

// releasedRounds is how many requests checkReleased sends, each on a
// connection of its own: enough that a few hundred bytes kept per
// connection stand far above the heap's noise.
const releasedRounds = 2000

// checkReleased: a server that has answered many requests holds what it held
// before them. Each request is tracked (Close must reach its connection) and
// opens its file; once it is answered, its worker untracks the connection and
// the file is closed, so the goroutines, the descriptors and the live heap
// come back to where they were.
func checkReleased(k *testkit.T, impl Impl, s *site, sff bool) {
	k.Helper()
	srv := startServer(k, impl, Config{Root: s.root, Threads: 2, Buffers: 4, SFF: sff}, nil)
	needServer(k, srv, s)
	uris := []string{"/a.txt", "/missing.txt", "/env.cgi?released", "/dir"}
	s.cgi(k, "env.cgi")
	k.CheckReleased(fmt.Sprintf("GET %q in turn, one request per connection (-t 2 -b 4, SFF %v)", uris, sff),
		releasedRounds, testkit.Released{HeapPerRound: 48, HeapSlack: 64 << 10}, func(i int) {
			uri := uris[(i+len(uris))%len(uris)]
			if resp, err := exchange(srv.Addr, "GET "+uri+" HTTP/1.0\r\n\r\n"); err != nil || resp.status == "" {
				k.Fatalf("GET %s (request %d of %d on its own connection): want a response, got %s",
					uri, i+1, releasedRounds, describe(resp, err))
			}
		})
}
