package judge

import "golang.org/x/sys/unix"

// sockOptions are the options of a TCP socket that net.FileConn changes:
// it turns keep-alive on (15 s) and Nagle's algorithm off for every TCP
// socket it wraps, whatever the socket's owner had set.
var sockOptions = [][2]int{
	{unix.SOL_SOCKET, unix.SO_KEEPALIVE},
	{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
	{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL},
	{unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
	{unix.IPPROTO_TCP, unix.TCP_NODELAY},
}

// sockState is what those options were on a socket before it moved.
type sockState struct {
	values []int
	ok     bool
}

// saveSockState reads the options on fd (a socket that is not TCP has none
// of the TCP ones, and is left alone).
func saveSockState(fd int) sockState {
	s := sockState{ok: true}
	for _, o := range sockOptions {
		v, err := unix.GetsockoptInt(fd, o[0], o[1])
		if err != nil {
			return sockState{}
		}
		s.values = append(s.values, v)
	}
	return s
}

// restore sets the options on fd back to what they were.
func (s sockState) restore(fd int) {
	if !s.ok {
		return
	}
	for i, o := range sockOptions {
		unix.SetsockoptInt(fd, o[0], o[1], s.values[i])
	}
}
