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

// The wire form of a message is flat: its values, in one table, refer to
// their elements by index, never by nesting, so that neither gob nor the
// decoder recurses on what the other process sent (a value nested a million
// deep would overflow the stack: a crash, not an error). The other process
// is untrusted, so receive bounds everything: a message's size (gob's own
// framing, maxMessage), the depth of its values (maxDepth), and each table
// entry is some value's element once at most, after it (no cycles, no
// sharing that would multiply on expansion).
const (
	maxMessage = 64 << 20
	maxDepth   = 64
)

// wireMessage is a message as it crosses.
type wireMessage struct {
	Call   uint64
	Reply  bool
	Handle uint64
	Method string
	Args   []int32 // the arguments: indices into Values
	Values []wireValue
	Fail   string
	NFD    int
}

// wireValue is a value whose Elems are indices into the message's Values.
type wireValue struct {
	Nil     bool
	Int     int64
	Uint    uint64
	Float   float64
	Str     string
	Bytes   []byte
	Elems   []int32
	Handle  uint64
	Home    bool
	Methods []string
	Err     *errValue
	FD      int
	Kind    string
}

func flatten(m *message) *wireMessage {
	w := &wireMessage{Call: m.Call, Reply: m.Reply, Handle: m.Handle, Method: m.Method, Fail: m.Fail, NFD: m.NFD}
	var add func(v value) int32
	add = func(v value) int32 {
		i := int32(len(w.Values))
		w.Values = append(w.Values, wireValue{Nil: v.Nil, Int: v.Int, Uint: v.Uint, Float: v.Float, Str: v.Str,
			Bytes: v.Bytes, Handle: v.Handle, Home: v.Home, Methods: v.Methods, Err: v.Err, FD: v.FD, Kind: v.Kind})
		for _, e := range v.Elems {
			c := add(e)
			w.Values[i].Elems = append(w.Values[i].Elems, c)
		}
		return i
	}
	for _, a := range m.Args {
		w.Args = append(w.Args, add(a))
	}
	return w
}

// unflatten rebuilds the message w describes, or says why it cannot.
func unflatten(w *wireMessage) (*message, error) {
	m := &message{Call: w.Call, Reply: w.Reply, Handle: w.Handle, Method: w.Method, Fail: w.Fail, NFD: w.NFD}
	used := make([]bool, len(w.Values))
	var build func(i, after int32, depth int) (value, error)
	build = func(i, after int32, depth int) (value, error) {
		switch {
		case depth > maxDepth:
			return value{}, fmt.Errorf("judge: a value nested deeper than %d", maxDepth)
		case i <= after || int(i) >= len(w.Values) || used[i]:
			return value{}, fmt.Errorf("judge: a message refers to value %d of %d out of order", i, len(w.Values))
		}
		used[i] = true
		x := w.Values[i]
		v := value{Nil: x.Nil, Int: x.Int, Uint: x.Uint, Float: x.Float, Str: x.Str, Bytes: x.Bytes,
			Handle: x.Handle, Home: x.Home, Methods: x.Methods, Err: x.Err, FD: x.FD, Kind: x.Kind}
		for _, e := range x.Elems {
			ev, err := build(e, i, depth+1)
			if err != nil {
				return value{}, err
			}
			v.Elems = append(v.Elems, ev)
		}
		return v, nil
	}
	for _, a := range w.Args {
		v, err := build(a, -1, 0)
		if err != nil {
			return nil, err
		}
		m.Args = append(m.Args, v)
	}
	if w.NFD < 0 || w.NFD > maxFDs {
		return nil, fmt.Errorf("judge: a message claims %d descriptors", w.NFD)
	}
	return m, nil
}

// maxFDs is the most descriptors one message carries (the kernel's own
// limit per SCM_RIGHTS message is 253).
const maxFDs = 253

// frameLimit passes a gob stream through and refuses a message longer than
// max before gob allocates room for it. A gob stream is a sequence of
// messages, each a byte count (gob's unsigned integer: a byte below 128,
// or the negated length of a big-endian number that follows) and as many
// bytes.
type frameLimit struct {
	r      io.Reader
	max    uint64
	head   []byte // the count read so far
	need   int    // bytes of the count still to come (0: in a body or between messages)
	body   uint64 // bytes of the current message still to come
	broken error
}

func (f *frameLimit) Read(p []byte) (int, error) {
	if f.broken != nil {
		return 0, f.broken
	}
	n, err := f.r.Read(p)
	for _, b := range p[:n] {
		if f.broken = f.step(b); f.broken != nil {
			return 0, f.broken
		}
	}
	return n, err
}

// step follows one byte of the stream.
func (f *frameLimit) step(b byte) error {
	switch {
	case f.body > 0:
		f.body--
		return nil
	case f.need == 0 && len(f.head) == 0:
		if b < 0x80 {
			return f.open(uint64(b))
		}
		f.need = 256 - int(b) // the negated length, as a byte
		if f.need > 8 {
			return errors.New("judge: a malformed message length")
		}
		f.head = append(f.head, b)
		return nil
	}
	f.head = append(f.head, b)
	f.need--
	if f.need > 0 {
		return nil
	}
	var size uint64
	for _, c := range f.head[1:] {
		size = size<<8 | uint64(c)
	}
	f.head = f.head[:0]
	return f.open(size)
}

func (f *frameLimit) open(size uint64) error {
	if size > f.max {
		return fmt.Errorf("judge: a message of %d bytes (at most %d)", size, f.max)
	}
	f.body = size
	return nil
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
	return newCheckedLink(uc, nil)
}

// newCheckedLink is a link whose reads are checked against the writer the
// peer must be: writer returns its pid (0: no check), asked at the first
// read. The judge's end checks that only the subject the grader started
// writes to it.
func newCheckedLink(uc *net.UnixConn, writer func() int) *link {
	l := &link{uc: uc}
	l.enc = gob.NewEncoder(&l.wbuf)
	l.dec = gob.NewDecoder(&frameLimit{r: &rightsReader{uc: uc, q: &l.fds, writer: writer}, max: maxMessage})
	return l
}

// send writes m with files, which the receiver gets as new descriptors.
func (l *link) send(m *message, files []*os.File) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	m.NFD = len(files)
	l.wbuf.Reset()
	if err := l.enc.Encode(flatten(m)); err != nil {
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
	var w wireMessage
	if err := l.dec.Decode(&w); err != nil {
		return nil, nil, err
	}
	m, err := unflatten(&w)
	if err != nil {
		return nil, nil, err
	}
	files, err := l.fds.take(m.NFD)
	return m, files, err
}

func (l *link) close() {
	if l.uc != nil { // the fuzz target's link has no socket
		l.uc.Close()
	}
}

// rightsReader reads the socket's bytes and queues the descriptors that
// arrive with them.
type rightsReader struct {
	uc     *net.UnixConn
	q      *fdQueue
	writer func() int // the pid every read must come from (nil, or 0: any)
	oob    [1 << 10]byte
}

func (r *rightsReader) Read(p []byte) (int, error) {
	n, oobn, _, _, err := r.uc.ReadMsgUnix(p, r.oob[:])
	if oobn > 0 {
		if r.writer != nil {
			if werr := checkWriter(r.oob[:oobn], r.writer()); werr != nil {
				return 0, werr
			}
		}
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
