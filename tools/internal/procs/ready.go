package procs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// pollEvery is how often the waits look again. Polling is the only way to
// learn that another process is ready; each look is cheap and bounded.
const pollEvery = 20 * time.Millisecond

// WaitDialable waits until addr accepts a TCP connection, the process exits
// (an error wrapping ErrExited), ctx is done, or within has passed. Use it
// where addr is known to be free before the start (FreeAddr), or else the
// connection may be someone else's server.
func (p *Process) WaitDialable(ctx context.Context, addr string, within time.Duration) error {
	return p.wait(ctx, addr, within, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

// WaitListening waits until the process itself holds a socket listening on
// addr's port, the process exits (an error wrapping ErrExited), ctx is done,
// or within has passed. It reads Linux's /proc instead of connecting: a
// connection opened and closed at once kills some servers (SIGPIPE, the OSTEP
// web server), and /proc also proves that the listening socket is the
// started process's own, not someone else's on a fixed port. Without /proc
// it falls back to connecting.
func (p *Process) WaitListening(ctx context.Context, addr string, within time.Duration) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	return p.wait(ctx, addr, within, func() bool {
		owned, err := listensOn(p.PID(), port)
		if err != nil { // no /proc: connect instead
			c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err != nil {
				return false
			}
			c.Close()
			return true
		}
		return owned
	})
}

// wait polls ready until it says yes or the wait ends.
func (p *Process) wait(ctx context.Context, addr string, within time.Duration, ready func() bool) error {
	deadline := time.Now().Add(within)
	for !ready() {
		select {
		case <-p.done:
			return exited(addr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollEvery):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, within)
		}
	}
	return nil
}

// listensOn reports whether process pid holds a TCP socket listening on
// port (read from /proc/net/tcp{,6} and /proc/<pid>/fd).
func listensOn(pid int, port string) (bool, error) {
	inodes, err := listeningInodes(port)
	if err != nil {
		return false, err
	}
	if len(inodes) == 0 {
		return false, nil
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && inodes[link] {
			return true, nil
		}
	}
	return false, nil
}

// listeningInodes lists, as "socket:[inode]", the sockets in state LISTEN
// on port in this network namespace.
func listeningInodes(port string) (map[string]bool, error) {
	n, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	want := fmt.Sprintf(":%04X", n)
	found := map[string]bool{}
	read := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		read++
		for _, inode := range parseProcNetTCP(string(b), want) {
			found["socket:["+inode+"]"] = true
		}
	}
	if read == 0 {
		return nil, errors.New("no /proc/net/tcp")
	}
	return found, nil
}

// parseProcNetTCP returns the inodes of the LISTEN (0A) sockets whose local
// address ends in portSuffix (":%04X").
func parseProcNetTCP(table, portSuffix string) []string {
	var inodes []string
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" || !strings.HasSuffix(f[1], portSuffix) {
			continue
		}
		inodes = append(inodes, f[9])
	}
	return inodes
}

// FreeAddr returns addr if nobody listens on it, or an error saying it is
// taken. With "" it returns 127.0.0.1 with a port the kernel picked as free
// (and with a port 0, addr's host with such a port). The port is free when
// FreeAddr returns; a server started next can take it.
func FreeAddr(addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// FreePort is FreeAddr("")'s port: one free on 127.0.0.1.
func FreePort() (int, error) {
	addr, err := FreeAddr("")
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}

// Placeholders replaces {addr} with addr and {port} with its port in a
// server's arguments, and more's pairs of placeholder and value too (e.g.
// "{dir}", dir): how the tools write a command line before they know where
// the server will listen.
func Placeholders(addr string, more ...string) *strings.Replacer {
	_, port, _ := net.SplitHostPort(addr)
	return strings.NewReplacer(append([]string{"{addr}", addr, "{port}", port}, more...)...)
}
