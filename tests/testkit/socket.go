package testkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// QuietWindow is how long a structural check listens for something a wrong
// server does and a right one never does (a reply that must not come, a
// request that must not start). A correct server cannot fail such a check
// however slow the machine; a wrong one shows itself in microseconds.
const QuietWindow = 200 * time.Millisecond

// KernelBuffers is the most a loopback connection's two socket buffers can
// hold for a receiver that never reads, with the kernel's default sizes: the
// sender's send buffer at its largest (tcp_wmem's maximum: it grows while
// the connection runs) and the receiver's at its start (tcp_rmem's default:
// it grows only as the receiver reads). Without Linux's numbers it assumes
// 8 MiB.
//
// It is an upper bound read from the configuration, not a measurement: a
// measured absorption depends on how far the send buffer has grown at that
// moment, so a flood sized from it can fall short on a loaded machine. A
// check that must overflow the kernel's buffers sends more than this; a check
// that bounds what a server buffers allows this much on top.
func KernelBuffers() int {
	wmem, err1 := sysctlField("/proc/sys/net/ipv4/tcp_wmem", 2)
	rmem, err2 := sysctlField("/proc/sys/net/ipv4/tcp_rmem", 1)
	if err1 != nil || err2 != nil {
		return 8 << 20
	}
	return wmem + rmem
}

// sysctlField reads the i-th number of a sysctl file such as "4096 16384 4194304".
func sysctlField(path string, i int) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if i >= len(f) {
		return 0, fmt.Errorf("%s: %q has no field %d", path, b, i)
	}
	return strconv.Atoi(f[i])
}

// SmallBuffers is the send and receive buffer size of ListenSmall's and
// DialSmall's sockets: small enough that a few replies fill a connection a
// client does not read, so back-pressure shows at once.
const SmallBuffers = 4096

// SmallAbsorption bounds what a pair of small-buffer sockets can hold between
// a server and a client that does not read: both ends' send and receive
// buffers (the kernel doubles what is asked for), and 64 KiB of slack for
// the segments in flight.
const SmallAbsorption = 2*(2*SmallBuffers) + 64<<10

// smallSocket sets a socket's send and receive buffers to SmallBuffers. With
// sizes set, Linux turns autotuning off: the buffers stay this small.
func smallSocket(_, _ string, rc syscall.RawConn) error {
	var err error
	if cerr := rc.Control(func(fd uintptr) {
		for _, opt := range []int{syscall.SO_RCVBUF, syscall.SO_SNDBUF} {
			if e := SetsockoptInt(fd, syscall.SOL_SOCKET, opt, SmallBuffers); e != nil {
				err = e
			}
		}
	}); cerr != nil {
		return cerr
	}
	return err
}

// ListenSmall listens on 127.0.0.1:0 with small socket buffers, which the
// accepted connections inherit.
func (k *T) ListenSmall() net.Listener {
	k.Helper()
	ln, err := (&net.ListenConfig{Control: smallSocket}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	return ln
}

// DialSmall dials addr with small socket buffers; the connection is closed
// at cleanup (and by the watchdog).
func (k *T) DialSmall(addr string) net.Conn {
	k.Helper()
	d := net.Dialer{Timeout: IOTimeout, Control: smallSocket}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		k.Fatalf("dial %s: %v", addr, err)
	}
	k.OnAbort(func() { nc.Close() })
	k.Cleanup(func() { nc.Close() })
	return nc
}
