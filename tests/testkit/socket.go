package testkit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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
