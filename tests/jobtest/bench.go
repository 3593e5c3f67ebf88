package jobtest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tools/given/lab"
)

// benchWorkloads are the load test's workloads with its default arguments:
// the request lines one client cycles through (mixed: the original's 10-slot
// cycle, 50% PRIME, 30% SORT, 20% MATMUL).
var benchWorkloads = []struct {
	name  string
	cycle []string
}{
	{"prime", []string{"PRIME 32416190071"}},
	{"sort", []string{"SORT 10000"}},
	{"matmul", []string{"MATMUL 32"}},
	{"mixed", []string{"PRIME 32416190071", "PRIME 32416190071", "PRIME 32416190071", "PRIME 32416190071",
		"PRIME 32416190071", "SORT 10000", "SORT 10000", "SORT 10000", "MATMUL 32", "MATMUL 32"}},
}

// Benchmark measures a server with 2 workers under the load test's
// workloads, with 10 and 50 clients each keeping one request outstanding
// over loopback TCP: ns/op is wall time per request (the inverse of
// throughput), and req/s is reported too. Client and server share the
// machine, as in the original's measurements.
//
//	go test -run '^$' -bench Server -benchtime 5000x ./solutions/03/
func Benchmark(b *testing.B, impl Impl) {
	for _, w := range benchWorkloads {
		for _, clients := range []int{10, 50} {
			b.Run(fmt.Sprintf("%s/clients=%d", w.name, clients), func(b *testing.B) {
				benchOne(b, impl, w.cycle, clients)
			})
		}
	}
}

func benchOne(b *testing.B, impl Impl, cycle []string, clients int) {
	raw, err := impl.NewServer(Config{Workers: 2, QueueCap: 1024})
	if err != nil {
		b.Fatalf("NewServer: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- raw.Serve(ln) }()
	defer func() {
		raw.Close()
		if err := <-served; !errors.Is(err, lab.ErrServerClosed) {
			b.Errorf("Serve: %v", err)
		}
	}()

	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	lines := make([][]byte, len(cycle))
	for i, l := range cycle {
		lines[i] = []byte(l + "\n")
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i, c := range conns {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Go(func() {
			r := bufio.NewReader(c)
			for j := range n {
				c.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := c.Write(lines[(i*7+j)%len(lines)]); err != nil {
					errs <- err
					return
				}
				answer, err := r.ReadSlice('\n')
				if err != nil || !strings.HasPrefix(string(answer), "OK ") {
					errs <- fmt.Errorf("answer %q, %v", answer, err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
