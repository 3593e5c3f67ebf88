package judge

import (
	"fmt"
	"net"
	"syscall"
)

// passCreds asks the kernel to attach, to everything the judge reads from
// the socket, the credentials of the process that wrote it (SO_PASSCRED):
// the kernel's word, which no sender can forge without privileges it does
// not have. A stream socket never merges two writers' bytes into one read
// once this is on.
func passCreds(uc *net.UnixConn) error {
	rc, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1)
	}); err != nil {
		return err
	}
	return serr
}

// checkWriter refuses bytes written by any process but the subject the
// grader started (want, its pid as the grader gave it; 0: not known, no
// check). A child of the subject that inherited its end of the socket
// before the harness took it (a program started from an init, the subject
// itself run again with a GORACE of its own) would otherwise answer in its
// place, and a race in its code would go unreported.
func checkWriter(oob []byte, want int) error {
	if want <= 0 {
		return nil
	}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		cred, err := syscall.ParseUnixCredentials(&m)
		if err != nil {
			continue
		}
		if int(cred.Pid) != want {
			return fmt.Errorf("judge: process %d, not the subject the grader started (%d), wrote to the judge's socket: "+
				"only the graded process may answer the judge (a program it started inherited the socket)", cred.Pid, want)
		}
	}
	return nil
}
