package main

import (
	"net"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// smallFile is chapter 06's limit for sending a file together with its
// header in one write; larger files go out by sendfile(2).
const smallFile = 16 << 10

// fileBufs recycles answerFile's buffers: the request, then the response.
var fileBufs = sync.Pool{New: func() any { b := make([]byte, 4096+smallFile); return &b }}

// answerFile is answer with a file system under it: per connection it reads
// (the first segment of) the request, opens path, learns its size with fstat,
// sends chapter 06's header and the file, and closes both — the file in the
// header's write when it is small, else after the header by sendfile(2), the
// header held back with MSG_MORE to share the file's first segment. These are
// the system calls any static server must add to answer (open, fstat, read or
// sendfile, close) and nothing else: no parsing, no deadlines, no checks.
func answerFile(c net.Conn, path string) {
	defer c.Close()
	bp := fileBufs.Get().(*[]byte)
	defer fileBufs.Put(bp)
	buf := *bp
	if _, err := c.Read(buf); err != nil {
		return
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	head := appendHeader(buf[:0], st.Size)
	if st.Size <= smallFile {
		n, err := unix.Pread(fd, buf[len(head):len(head)+int(st.Size)], 0)
		if err == nil {
			c.Write(buf[:len(head)+n])
		}
		return
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	var off int64
	rc.Write(func(s uintptr) bool {
		for len(head) > 0 {
			n, err := unix.SendmsgN(int(s), head, nil, nil, unix.MSG_MORE)
			if err == unix.EAGAIN {
				return false
			} else if err != nil {
				return true
			}
			head = head[n:]
		}
		for off < st.Size {
			if _, err := unix.Sendfile(int(s), fd, &off, int(st.Size-off)); err == unix.EAGAIN {
				return false // wait in the poller until the socket drains
			} else if err != nil {
				return true
			}
		}
		return true
	})
}

// appendHeader appends chapter 06's 200 header for a body of size bytes.
func appendHeader(b []byte, size int64) []byte {
	b = append(b, "HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: "...)
	b = strconv.AppendInt(b, size, 10)
	return append(b, "\r\nContent-Type: text/html\r\n\r\n"...)
}
