//go:build unix

package judge

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
)

// The subject's end of the socket is the one the grader handed over, not a
// socket the student's code put on descriptor 3 before Serve took it (an
// init that moves the real one aside and relays, editing what crosses).
// The grader names its socket (device and inode, which no other socket can
// have) in SocketIDEnv; Serve reads the name from the environment the
// process was started with (/proc/self/environ, which os.Setenv does not
// change) and refuses any other socket.

// SocketID is the name of the socket f.
func SocketID(f *os.File) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
}

// checkSocket says why descriptor fd is not the socket the grader handed
// over, or returns nil. Where the start-up environment cannot be read (no
// /proc), the current one is all there is.
func checkSocket(fd int) error {
	want := startupEnv(SocketIDEnv)
	if want == "" {
		return fmt.Errorf("judge: no %s: the grader names the subject's socket", SocketIDEnv)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fmt.Errorf("judge: descriptor %d: %w", fd, err)
	}
	if got := fmt.Sprintf("%d:%d", st.Dev, st.Ino); got != want {
		return fmt.Errorf("judge: descriptor %d is socket %s, not the grader's %s: something put its own there", fd, got, want)
	}
	return nil
}

// startupEnv is the value of key in the environment the process was
// started with.
func startupEnv(key string) string {
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return os.Getenv(key)
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(key+"=")); ok {
			return string(v)
		}
	}
	return ""
}
