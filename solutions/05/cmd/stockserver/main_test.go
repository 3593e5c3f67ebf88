//go:build linux

package main

import (
	"io"
	"testing"
)

// TestAddr: the server listens on every interface by default, as the
// original does, and on the one -addr names otherwise (127.0.0.1: nobody
// else on the network can trade).
func TestAddr(t *testing.T) {
	cases := []struct {
		args []string
		addr string
	}{
		{[]string{"9000"}, ":9000"},
		{[]string{"-addr", "127.0.0.1", "-lock", "tree", "9000", "8"}, "127.0.0.1:9000"},
	}
	for _, c := range cases {
		addr, _, err := parse(c.args, io.Discard)
		if err != nil || addr != c.addr {
			t.Errorf("stockserver %q listens on %q (%v), want %q", c.args, addr, err, c.addr)
		}
	}
	for _, args := range [][]string{{}, {"1", "2", "3"}} {
		if _, _, err := parse(args, io.Discard); err == nil {
			t.Errorf("stockserver %q: want a usage error", args)
		}
	}
}
