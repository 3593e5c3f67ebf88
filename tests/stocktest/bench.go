package stocktest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sync"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/stockproto"
)

// BenchmarkServer drives a server over loopback with the original's
// benchmark: each of 16 or 64 clients sends random show / buy / sell queries
// (stocks 1..10, 1..10 shares), one at a time, reading each 8192-byte
// reply. It reports queries/s. Client and server share the machine, as in the
// original's benchmark.
func BenchmarkServer(b *testing.B, impl Impl) {
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			benchServer(b, impl, clients)
		})
	}
}

func benchServer(b *testing.B, impl Impl, clients int) {
	path := filepath.Join(testkit.TempDir(b), "stock.txt")
	var text []byte
	for id := 1; id <= 10; id++ {
		text = fmt.Appendf(text, "%d %d %d\n", id, 1000, id*100)
	}
	if err := testkit.WriteFile(path, text, 0o644); err != nil {
		b.Fatal(err)
	}
	srv, err := impl.NewServer(Config{StockPath: path, Workers: clients})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		if err := <-served; err != lab.ErrServerClosed {
			b.Errorf("Serve: %v", err)
		}
	}()

	conns := make([]net.Conn, clients)
	for i := range conns {
		if conns[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close()
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, c := range conns {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Go(func() {
			if err := benchClient(c, n, uint64(i)); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}

func benchClient(c net.Conn, n int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	reply := make([]byte, stockproto.RecordSize)
	var req []byte
	for range n {
		req = req[:0]
		switch rng.IntN(3) {
		case 0:
			req = append(req, "show\n"...)
		case 1:
			req = fmt.Appendf(req, "buy %d %d\n", 1+rng.IntN(10), 1+rng.IntN(10))
		default:
			req = fmt.Appendf(req, "sell %d %d\n", 1+rng.IntN(10), 1+rng.IntN(10))
		}
		if _, err := c.Write(req); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, reply); err != nil {
			return err
		}
	}
	return nil
}
