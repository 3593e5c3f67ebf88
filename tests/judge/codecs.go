//go:build unix

package judge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"reflect"
	"syscall"
	"time"
)

// codec is how a type that cannot be copied field by field crosses.
type codec struct {
	encode func(e *encoder, v reflect.Value) (value, error)
	decode func(d *decoder, x value, t reflect.Type) (reflect.Value, error)
}

// codecs is filled in init: the codecs call back into the encoder.
var codecs map[reflect.Type]codec

func init() {
	codecs = map[reflect.Type]codec{
		reflect.TypeFor[time.Time]():       {encodeTime, decodeTime},
		reflect.TypeFor[*slog.Logger]():    {encodeLogger, decodeLogger},
		reflect.TypeFor[*bufio.Reader]():   {encodeBufio, decodeBufio},
		reflect.TypeFor[net.Listener]():    {encodeListener, decodeListener},
		reflect.TypeFor[net.Conn]():        {encodeConn, decodeConn},
		reflect.TypeFor[context.Context](): {encodeContext, decodeContext},
		reflect.TypeFor[fs.FileInfo]():     {encodeFileInfo, decodeFileInfo},
		reflect.TypeFor[*os.File]():        {encodeFile, decodeFile},
		reflect.TypeFor[*tls.Config]():     {encodeTLS, decodeTLS},
	}
}

func codecFor(t reflect.Type) (codec, bool) {
	c, ok := codecs[t]
	return c, ok
}

func encodeTime(_ *encoder, v reflect.Value) (value, error) {
	b, err := v.Interface().(time.Time).MarshalBinary()
	return value{Bytes: b}, err
}

func decodeTime(_ *decoder, x value, _ reflect.Type) (reflect.Value, error) {
	var t time.Time
	err := t.UnmarshalBinary(x.Bytes)
	return reflect.ValueOf(t), err
}

// dupFD duplicates the descriptor behind a syscall.Conn without touching
// its blocking mode (os.File.Fd would make it blocking for every copy).
func dupFD(sc syscall.Conn) (*os.File, error) {
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) { fd, dupErr = dupCloexec(int(s)) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return os.NewFile(uintptr(fd), "judge-dup"), nil
}

// A *os.File moves to the other process as its descriptor: this process's
// copy is closed once it is sent.
func encodeFile(e *encoder, v reflect.Value) (value, error) {
	return value{FD: e.attach(v.Interface().(*os.File))}, nil
}

func decodeFile(d *decoder, x value, _ reflect.Type) (reflect.Value, error) {
	f, err := d.file(x.FD)
	return reflect.ValueOf(f), err
}

// A connection with a socket moves to the other process as its descriptor:
// the other process reads and writes the same socket, and this process's
// copy is closed, so that the other's Close is the one that ends the
// connection. Any other net.Conn stays home behind a proxy.
func encodeConn(e *encoder, v reflect.Value) (value, error) {
	if sc, ok := v.Interface().(syscall.Conn); ok {
		switch v.Interface().(type) {
		case *net.TCPConn, *net.UnixConn:
			f, err := dupFD(sc)
			if err != nil {
				return value{}, err
			}
			v.Interface().(net.Conn).Close()
			return value{FD: e.attach(f), Kind: "socket"}, nil
		}
	}
	return e.encodeInterface(v, reflect.TypeFor[net.Conn]())
}

func decodeConn(d *decoder, x value, t reflect.Type) (reflect.Value, error) {
	if x.Kind != "socket" {
		return d.decodeInterface(x, t)
	}
	f, err := d.file(x.FD)
	if err != nil {
		return reflect.Zero(t), err
	}
	defer f.Close()
	// net.FileConn sets keep-alive and TCP_NODELAY on the socket, which
	// is the other process's too: put back what its owner had, so that a
	// check of the server's socket options sees the server's choices.
	var state sockState
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { state = saveSockState(int(fd)) })
	}
	c, err := net.FileConn(f)
	if err != nil {
		return reflect.Zero(t), err
	}
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { state.restore(int(fd)) })
		}
	}
	out := reflect.New(t).Elem()
	out.Set(reflect.ValueOf(c))
	return out, nil
}

// A listener stays home: the other process's Accept calls it, so that a
// listener that injects faults injects them there too, and Close closes the
// socket for every client. SyscallConn (what an event loop needs) fetches a
// copy of the socket's descriptor.
func encodeListener(e *encoder, v reflect.Value) (value, error) {
	x, err := e.encodeInterface(v, reflect.TypeFor[net.Listener]())
	x.Str = v.Interface().(net.Listener).Addr().String()
	return x, err
}

func decodeListener(d *decoder, x value, t reflect.Type) (reflect.Value, error) {
	v, err := d.decodeInterface(x, t)
	if err != nil || x.Home {
		return v, err
	}
	l := asListenerProxy(v.Interface())
	if addr, aerr := net.ResolveTCPAddr("tcp", x.Str); l != nil && aerr == nil {
		l.mu.Lock()
		l.addr = addr
		l.mu.Unlock()
	}
	return v, nil
}

// A context is cancelled in the other process when it is done here.
func encodeContext(e *encoder, v reflect.Value) (value, error) {
	ctx := v.Interface().(context.Context)
	x := value{Kind: "ctx"}
	if dl, ok := ctx.Deadline(); ok {
		x.Int = dl.UnixNano()
	}
	if ctx.Err() != nil {
		x.Str = "done"
		return x, nil
	}
	if ctx.Done() != nil {
		x.Uint = e.p.watchContext(ctx)
	}
	return x, nil
}

func decodeContext(d *decoder, x value, _ reflect.Type) (reflect.Value, error) {
	ctx := context.Background()
	if x.Str != "done" && x.Uint == 0 {
		return reflect.ValueOf(&ctx).Elem(), nil // never done
	}
	var cancel context.CancelFunc
	if x.Int != 0 {
		ctx, cancel = context.WithDeadline(ctx, time.Unix(0, x.Int))
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	d.p.mu.Lock()
	early := d.p.cancelledEarly[x.Uint] // its cancel arrived before it (serveCancel)
	delete(d.p.cancelledEarly, x.Uint)
	if x.Str == "done" || early {
		d.p.mu.Unlock()
		cancel()
	} else {
		d.p.cancels[x.Uint] = cancel
		d.p.mu.Unlock()
	}
	return reflect.ValueOf(&ctx).Elem(), nil
}

// watchContext cancels, in the other process, the copy of ctx it is about
// to receive once ctx is done here.
func (p *peer) watchContext(ctx context.Context) uint64 {
	p.mu.Lock()
	p.nextHandle++
	id := p.nextHandle
	p.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
			_ = p.callTyped(0, "cancel", reflect.TypeFor[func(uint64)](), []any{id}, nil)
		case <-p.lost:
		}
	}()
	return id
}

func (p *peer) serveCancel(id uint64) {
	p.mu.Lock()
	cancel, ok := p.cancels[id]
	delete(p.cancels, id)
	if !ok {
		// The context was cancelled while the call that carries it was on
		// its way: the call, decoded on another goroutine, finds it here.
		p.cancelledEarly[id] = true
	}
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// A bufio.Reader stays home: the other process reads through it with a
// reader of its own of the same size (one per reader), which is handed a
// line at a most at a time, so that it never reads ahead of what the code
// that reads it asked for: what that code leaves is left in the original.
func encodeBufio(e *encoder, v reflect.Value) (value, error) {
	br := v.Interface().(*bufio.Reader)
	return value{Handle: e.p.export(v), Int: int64(br.Size()), Kind: "bufio"}, nil
}

func decodeBufio(d *decoder, x value, _ reflect.Type) (reflect.Value, error) {
	key := importKey{x.Handle, reflect.TypeFor[*bufio.Reader]()}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if v, ok := d.p.importsByType[key]; ok {
		return v, nil
	}
	r := &lineReaderProxy{&Object{p: d.p, handle: x.Handle, iface: reflect.TypeFor[io.Reader]()}}
	v := reflect.ValueOf(bufio.NewReaderSize(r, int(x.Int)))
	d.p.importsByType[key] = v
	return v, nil
}

// A logger's records are handled by its handler at home.
func encodeLogger(e *encoder, v reflect.Value) (value, error) {
	h := v.Interface().(*slog.Logger).Handler()
	return value{Handle: e.p.export(reflect.ValueOf(&h).Elem()), Kind: "logger"}, nil
}

func decodeLogger(d *decoder, x value, _ reflect.Type) (reflect.Value, error) {
	h := &handlerProxy{o: &Object{p: d.p, handle: x.Handle, iface: reflect.TypeFor[slog.Handler]()}}
	return reflect.ValueOf(slog.New(h)), nil
}

// A FileInfo is copied, with the device and inode that say which file it is.
func encodeFileInfo(_ *encoder, v reflect.Value) (value, error) {
	fi := v.Interface().(fs.FileInfo)
	t, _ := fi.ModTime().MarshalBinary()
	x := value{Str: fi.Name(), Int: fi.Size(), Uint: uint64(fi.Mode()), Bytes: t, Kind: "fileinfo"}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		x.Elems = []value{{Uint: uint64(st.Dev)}, {Uint: uint64(st.Ino)}}
	}
	return x, nil
}

func decodeFileInfo(_ *decoder, x value, t reflect.Type) (reflect.Value, error) {
	fi := &fileInfo{name: x.Str, size: x.Int, mode: fs.FileMode(x.Uint)}
	_ = fi.mod.UnmarshalBinary(x.Bytes)
	if len(x.Elems) == 2 {
		fi.sys = &syscall.Stat_t{Ino: x.Elems[1].Uint}
		setDev(fi.sys, x.Elems[0].Uint)
	}
	out := reflect.New(t).Elem()
	out.Set(reflect.ValueOf(fi))
	return out, nil
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
	sys  *syscall.Stat_t
}

func (f *fileInfo) Name() string       { return f.name }
func (f *fileInfo) Size() int64        { return f.size }
func (f *fileInfo) Mode() fs.FileMode  { return f.mode }
func (f *fileInfo) ModTime() time.Time { return f.mod }
func (f *fileInfo) IsDir() bool        { return f.mode.IsDir() }
func (f *fileInfo) Sys() any           { return f.sys }

// SameFile is os.SameFile for FileInfos that may have crossed processes:
// the same device and inode.
func SameFile(a, b fs.FileInfo) bool {
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	if !okA || !okB {
		return os.SameFile(a, b)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// setDev sets st.Dev, whose type differs between systems.
func setDev(st *syscall.Stat_t, dev uint64) {
	f := reflect.ValueOf(st).Elem().FieldByName("Dev")
	if f.CanInt() {
		f.SetInt(int64(dev))
	} else {
		f.SetUint(dev)
	}
}

// lineReaderProxy reads from the other process's bufio.Reader up to the
// next newline at most.
type lineReaderProxy struct{ o *Object }

func (r *lineReaderProxy) Read(p []byte) (int, error) {
	var b []byte
	var err error
	if cerr := r.o.p.callTyped(0, "readLine", reflect.TypeFor[func(uint64, int) ([]byte, error)](),
		[]any{r.o.handle, len(p)}, []any{&b, &err}); cerr != nil {
		return 0, cerr
	}
	return copy(p, b), err
}

func (p *peer) serveReadLine(handle uint64, n int) ([]byte, error) {
	v, ok := p.exportedAs(handle)
	if !ok {
		return nil, os.ErrInvalid
	}
	br, ok := v.Interface().(*bufio.Reader)
	if !ok {
		return nil, os.ErrInvalid
	}
	if br.Buffered() == 0 {
		if _, err := br.Peek(1); err != nil {
			return nil, err
		}
	}
	buf, _ := br.Peek(min(n, br.Buffered()))
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i+1]
	}
	out := bytes.Clone(buf)
	_, _ = br.Discard(len(out))
	return out, nil
}
