//go:build !judge

package stock

import (
	"net"
	"testing"
	"time"
)

// BenchmarkDeadline measures what awaitRequest saves by moving a connection's
// deadline only when it comes near (rearm): setting a deadline re-arms a
// runtime timer, checking one reads the clock.
//
//	go test -run '^$' -bench Deadline ./chapters/04/
func BenchmarkDeadline(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	b.Run("set-every-time", func(b *testing.B) {
		for b.Loop() {
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		}
	})
	b.Run("rearm", func(b *testing.B) {
		var by time.Time
		for b.Loop() {
			if at, moved := rearm(by, 30*time.Second); moved {
				by = at
				conn.SetReadDeadline(at)
			}
		}
	})
}
