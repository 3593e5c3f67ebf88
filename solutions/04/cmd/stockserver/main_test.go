package main

import (
	"io"
	"testing"
	"time"

	stock "serverlab/solutions/04"
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
		{[]string{"-addr", "127.0.0.1", "9000", "8"}, "127.0.0.1:9000"},
		{[]string{"-addr", "::1", "9000"}, "[::1]:9000"},
	}
	for _, c := range cases {
		addr, _, _, err := parse(c.args, io.Discard)
		if err != nil || addr != c.addr {
			t.Errorf("stockserver %q listens on %q (%v), want %q", c.args, addr, err, c.addr)
		}
	}
	_, cfg, procs, err := parse([]string{"-lock", "tree", "-file", "s.txt", "-idle", "2s", "-procs", "2", "9000", "3"}, io.Discard)
	if err != nil || cfg.Granularity != stock.TreeLock || cfg.StockPath != "s.txt" || cfg.Workers != 3 ||
		cfg.IdleTimeout != 2*time.Second || cfg.WriteTimeout != 10*time.Second || procs != 2 {
		t.Errorf("stockserver -lock tree -file s.txt 9000 3: %+v, %v", cfg, err)
	}
	for _, args := range [][]string{{}, {"1", "2", "3"}, {"9000", "0"}, {"-lock", "x", "9000"}, {"-procs", "-1", "9000"}} {
		if _, _, _, err := parse(args, io.Discard); err == nil {
			t.Errorf("stockserver %q: want a usage error", args)
		}
	}
}
