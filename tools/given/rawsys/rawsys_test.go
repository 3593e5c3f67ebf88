//go:build linux

package rawsys

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadWritePollNow(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(epfd)
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fds[1])}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fds[1], &ev); err != nil {
		t.Fatal(err)
	}
	events := make([]unix.EpollEvent, 4)
	if n, err := PollNow(epfd, events); n != 0 || err != nil {
		t.Fatalf("PollNow with nothing ready = %d, %v; want 0, nil at once", n, err)
	}
	buf := make([]byte, 16)
	if n, err := Read(fds[1], buf); n != 0 || err != unix.EAGAIN {
		t.Fatalf("Read of an empty non-blocking socket = %d, %v; want 0, EAGAIN", n, err)
	}
	if n, err := Write(fds[0], []byte("hello")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v; want 5, nil", n, err)
	}
	if n, err := PollNow(epfd, events); n != 1 || err != nil || events[0].Fd != int32(fds[1]) {
		t.Fatalf("PollNow with one fd readable = %d, %v, %+v; want that fd", n, err, events[:n])
	}
	events[0] = unix.EpollEvent{}
	if n, err := Wait(epfd, events, 1000); n != 1 || err != nil || events[0].Fd != int32(fds[1]) {
		t.Fatalf("Wait with one fd readable = %d, %v, %+v; want that fd at once", n, err, events[:n])
	}
	if n, err := Read(fds[1], buf); n != 5 || err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Read = %d, %v, %q; want 5, nil, \"hello\"", n, err, buf[:n])
	}
	if n, err := Write(fds[0], nil); n != 0 || err != nil {
		t.Fatalf("Write of nothing = %d, %v; want 0, nil", n, err)
	}
}
