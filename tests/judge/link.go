//go:build unix

package judge

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// message is one call or one reply on the socket.
type message struct {
	Call   uint64 // the call's id; its reply carries the same
	Reply  bool
	Handle uint64 // what to call: a handle the receiver exported; 0 is its services
	Method string // the method of the object Handle names ("" for a function)
	Args   []value
	Fail   string // the call could not be made: the reason (a reply only)
	NFD    int    // file descriptors that came with the message
}

// value is one Go value on the socket (codec.go says which field holds what).
type value struct {
	Nil     bool
	Int     int64
	Uint    uint64
	Float   float64
	Str     string
	Bytes   []byte
	Elems   []value
	Handle  uint64   // an object or function the sender exported
	Home    bool     // Handle is one the receiver exported: the value goes home
	Methods []string // the exported object's methods
	Err     *errValue
	FD      int    // 1-based index into the message's descriptors; 0: none
	Kind    string // a special codec's name ("listener", "ctx", …)
}

// link carries messages and the descriptors that go with them over a Unix
// stream socket. The descriptors travel as SCM_RIGHTS with the bytes of their
// message; the kernel delivers them no later than those bytes, so a reader
// that queues every descriptor it receives finds a message's descriptors at
// the front of the queue when the message is decoded.
type link struct {
	uc *net.UnixConn

	wmu  sync.Mutex
	wbuf bytes.Buffer
	enc  *gob.Encoder

	dec *gob.Decoder
	fds fdQueue
}

func newLink(uc *net.UnixConn) *link {
	l := &link{uc: uc}
	l.enc = gob.NewEncoder(&l.wbuf)
	l.dec = gob.NewDecoder(&rightsReader{uc: uc, q: &l.fds})
	return l
}

// send writes m with files, which the receiver gets as new descriptors.
func (l *link) send(m *message, files []*os.File) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	m.NFD = len(files)
	l.wbuf.Reset()
	if err := l.enc.Encode(m); err != nil {
		return fmt.Errorf("judge: encode: %w", err)
	}
	b := l.wbuf.Bytes()
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = syscall.UnixRights(fds...)
	}
	n, _, err := l.uc.WriteMsgUnix(b, oob, nil)
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		return err
	}
	if n < len(b) {
		_, err = l.uc.Write(b[n:])
	}
	return err
}

// receive reads the next message and the descriptors that came with it.
func (l *link) receive() (*message, []*os.File, error) {
	var m message
	if err := l.dec.Decode(&m); err != nil {
		return nil, nil, err
	}
	files, err := l.fds.take(m.NFD)
	return &m, files, err
}

func (l *link) close() { l.uc.Close() }

// rightsReader reads the socket's bytes and queues the descriptors that
// arrive with them.
type rightsReader struct {
	uc  *net.UnixConn
	q   *fdQueue
	oob [1 << 10]byte
}

func (r *rightsReader) Read(p []byte) (int, error) {
	n, oobn, _, _, err := r.uc.ReadMsgUnix(p, r.oob[:])
	if oobn > 0 {
		r.q.parse(r.oob[:oobn])
	}
	n = max(n, 0) // ReadMsgUnix reports -1 with an error
	if n == 0 && err == nil {
		err = io.EOF
	}
	return n, err
}

// fdQueue holds received descriptors until their message claims them.
type fdQueue struct {
	mu  sync.Mutex
	fds []int
}

func (q *fdQueue) parse(oob []byte) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err == nil {
			for _, fd := range fds {
				syscall.CloseOnExec(fd)
			}
			q.fds = append(q.fds, fds...)
		}
	}
}

func (q *fdQueue) take(n int) ([]*os.File, error) {
	if n == 0 {
		return nil, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.fds) < n {
		return nil, errors.New("judge: a message's descriptors did not arrive")
	}
	files := make([]*os.File, n)
	for i, fd := range q.fds[:n] {
		files[i] = os.NewFile(uintptr(fd), "judge-fd")
	}
	q.fds = q.fds[n:]
	return files, nil
}
