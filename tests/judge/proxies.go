//go:build unix

package judge

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"reflect"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"serverlab/tools/given/lab"
)

// The proxies of the interfaces every suite passes: readers and writers,
// locks, servers, listeners and connections.
func init() {
	Proxy(func(o *Object) io.Reader { return &readerProxy{o} })
	Proxy(func(o *Object) io.Writer { return &writerProxy{o} })
	Proxy(func(o *Object) sync.Locker { return &lockerProxy{o} })
	Proxy(func(o *Object) lab.Server { return &serverProxy{o} })
	Proxy(newListenerProxy)
	Proxy(newConnProxy)
}

func dupCloexec(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }

// readerProxy reads from the other process's reader: the bytes come back
// in the reply (a generic call would only send the buffer there).
type readerProxy struct{ o *Object }

func (r *readerProxy) Read(p []byte) (int, error) {
	const most = 1 << 20
	n := min(len(p), most)
	var b []byte
	var err error
	if cerr := r.o.p.callTyped(0, "read", reflect.TypeFor[func(uint64, int) ([]byte, error)](),
		[]any{r.o.handle, n}, []any{&b, &err}); cerr != nil {
		return 0, cerr
	}
	return copy(p, b), err
}

func (p *peer) serveRead(handle uint64, n int) ([]byte, error) {
	p.mu.Lock()
	v, ok := p.exports[handle]
	p.mu.Unlock()
	r, isReader := v.Interface().(io.Reader)
	if !ok || !isReader {
		return nil, os.ErrInvalid
	}
	buf := make([]byte, n)
	m, err := r.Read(buf)
	return buf[:m], err
}

type writerProxy struct{ o *Object }

func (w *writerProxy) Write(p []byte) (n int, err error) {
	_ = w.o.Call("Write", []any{p}, &n, &err)
	return n, err
}

type lockerProxy struct{ o *Object }

func (l *lockerProxy) Lock()   { _ = l.o.Call("Lock", nil) }
func (l *lockerProxy) Unlock() { _ = l.o.Call("Unlock", nil) }

type serverProxy struct{ o *Object }

func (s *serverProxy) Serve(ln net.Listener) (err error) {
	_ = s.o.Call("Serve", []any{ln}, &err)
	return err
}

func (s *serverProxy) Close() (err error) {
	_ = s.o.Call("Close", nil, &err)
	return err
}

// listenerProxy accepts through the other process's listener. Its
// SyscallConn is a copy of the listening socket, fetched when first asked
// for: what an event loop accepts on directly.
type listenerProxy struct {
	o *Object

	mu    sync.Mutex
	local *net.TCPListener
	addr  net.Addr
}

func (l *listenerProxy) Accept() (c net.Conn, err error) {
	_ = l.o.Call("Accept", nil, &c, &err)
	return c, err
}

func (l *listenerProxy) Close() (err error) {
	_ = l.o.Call("Close", nil, &err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.local != nil {
		l.local.Close()
	}
	return err
}

func (l *listenerProxy) Addr() net.Addr {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addr == nil {
		var s string
		_ = l.o.p.callTyped(0, "listenerAddr", reflect.TypeFor[func(uint64) string](), []any{l.o.handle}, []any{&s})
		addr, err := net.ResolveTCPAddr("tcp", s)
		if err != nil {
			return &net.TCPAddr{}
		}
		l.addr = addr
	}
	return l.addr
}

func (l *listenerProxy) SyscallConn() (syscall.RawConn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.local == nil {
		var f *os.File
		var err error
		if cerr := l.o.p.callTyped(0, "listenerFD", reflect.TypeFor[func(uint64) (*os.File, error)](),
			[]any{l.o.handle}, []any{&f, &err}); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		ln, err := net.FileListener(f)
		if err != nil {
			return nil, err
		}
		tl, ok := ln.(*net.TCPListener)
		if !ok {
			ln.Close()
			return nil, os.ErrInvalid
		}
		l.local = tl
	}
	return l.local.SyscallConn()
}

// A proxy has the optional methods its object has, and no others, so that a
// type assertion in the student's code (an accept loop that stops by the
// listener's deadline, a half-close) answers as it would on the object.

// newListenerProxy stands in for a listener of the other process.
func newListenerProxy(o *Object) net.Listener {
	l := &listenerProxy{o: o}
	switch {
	case o.Has("AcceptFault") && o.Has("SetDeadline"):
		return &struct {
			*listenerProxy
			deadlineProxy
			faultProxy
		}{l, deadlineProxy{o}, faultProxy{o}}
	case o.Has("AcceptFault"):
		return &struct {
			*listenerProxy
			faultProxy
		}{l, faultProxy{o}}
	case o.Has("SetDeadline"):
		return &struct {
			*listenerProxy
			deadlineProxy
		}{l, deadlineProxy{o}}
	}
	return l
}

// deadlineProxy is a listener's SetDeadline: the Accept calls in flight at
// home end with the same timeout error they would end with here.
type deadlineProxy struct{ o *Object }

func (d deadlineProxy) SetDeadline(t time.Time) (err error) {
	_ = d.o.p.callTyped(d.o.handle, "SetDeadline", reflect.TypeFor[func(time.Time) error](), []any{t}, []any{&err})
	return err
}

// faultProxy is the accept-fault injection of tests/testkit's faulty
// listener, for an event loop.
type faultProxy struct{ o *Object }

func (f faultProxy) AcceptFault() (err error) {
	_ = f.o.p.callTyped(f.o.handle, "AcceptFault", reflect.TypeFor[func() error](), nil, []any{&err})
	return err
}

// asListenerProxy finds the listenerProxy in any of newListenerProxy's
// results.
func asListenerProxy(v any) *listenerProxy {
	switch p := v.(type) {
	case *listenerProxy:
		return p
	case interface{ base() *listenerProxy }:
		return p.base()
	}
	return nil
}

func (l *listenerProxy) base() *listenerProxy { return l }

func (p *peer) exportedAs(handle uint64) (reflect.Value, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.exports[handle]
	return v, ok
}

func (p *peer) serveListenerFD(handle uint64) (*os.File, error) {
	v, ok := p.exportedAs(handle)
	if !ok {
		return nil, os.ErrInvalid
	}
	sc, ok := v.Interface().(syscall.Conn)
	if !ok {
		return nil, os.ErrInvalid
	}
	return dupFD(sc)
}

func (p *peer) serveListenerAddr(handle uint64) string {
	v, ok := p.exportedAs(handle)
	if !ok {
		return ""
	}
	if ln, ok := v.Interface().(net.Listener); ok {
		return ln.Addr().String()
	}
	return ""
}

// connProxy is a connection that is not a socket of this machine (a
// check's wrapper): every call goes to it.
type connProxy struct{ o *Object }

// newConnProxy stands in for a connection of the other process that is not
// a bare socket: with CloseWrite if it has one (a half-close).
func newConnProxy(o *Object) net.Conn {
	c := &connProxy{o}
	if o.Has("CloseWrite") {
		return &struct {
			*connProxy
			closeWriteProxy
		}{c, closeWriteProxy{o}}
	}
	return c
}

type closeWriteProxy struct{ o *Object }

func (c closeWriteProxy) CloseWrite() (err error) {
	_ = c.o.p.callTyped(c.o.handle, "CloseWrite", reflect.TypeFor[func() error](), nil, []any{&err})
	return err
}

func (c *connProxy) Read(p []byte) (int, error) { return (&readerProxy{c.o}).Read(p) }
func (c *connProxy) Write(p []byte) (n int, err error) {
	_ = c.o.Call("Write", []any{p}, &n, &err)
	return n, err
}
func (c *connProxy) Close() (err error) {
	_ = c.o.Call("Close", nil, &err)
	return err
}
func (c *connProxy) LocalAddr() (a net.Addr)  { return c.addr("LocalAddr") }
func (c *connProxy) RemoteAddr() (a net.Addr) { return c.addr("RemoteAddr") }
func (c *connProxy) addr(which string) net.Addr {
	var s string
	_ = c.o.p.callTyped(0, "connAddr", reflect.TypeFor[func(uint64, string) string](), []any{c.o.handle, which}, []any{&s})
	a, _ := net.ResolveTCPAddr("tcp", s)
	if a == nil {
		return &net.TCPAddr{}
	}
	return a
}
func (c *connProxy) SetDeadline(t time.Time) (err error) {
	_ = c.o.Call("SetDeadline", []any{t}, &err)
	return err
}
func (c *connProxy) SetReadDeadline(t time.Time) (err error) {
	_ = c.o.Call("SetReadDeadline", []any{t}, &err)
	return err
}
func (c *connProxy) SetWriteDeadline(t time.Time) (err error) {
	_ = c.o.Call("SetWriteDeadline", []any{t}, &err)
	return err
}

func (p *peer) serveConnAddr(handle uint64, which string) string {
	v, ok := p.exportedAs(handle)
	if !ok {
		return ""
	}
	c, ok := v.Interface().(net.Conn)
	if !ok {
		return ""
	}
	if which == "LocalAddr" {
		return c.LocalAddr().String()
	}
	return c.RemoteAddr().String()
}

// handlerProxy hands log records to the other process's slog.Handler.
type handlerProxy struct {
	o       *Object
	attrs   []slog.Attr
	groups  string
	enabled sync.Map // slog.Level -> bool
}

func (h *handlerProxy) Enabled(ctx context.Context, level slog.Level) bool {
	if v, ok := h.enabled.Load(level); ok {
		return v.(bool)
	}
	var on bool
	_ = h.o.Call("Enabled", []any{context.Background(), level}, &on)
	h.enabled.Store(level, on)
	return on
}

func (h *handlerProxy) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := &handlerProxy{o: h.o, groups: h.groups}
	c.attrs = append(append(c.attrs, h.attrs...), h.grouped(attrs)...)
	return c
}

func (h *handlerProxy) WithGroup(name string) slog.Handler {
	c := &handlerProxy{o: h.o, attrs: h.attrs, groups: h.groups + name + "."}
	return c
}

func (h *handlerProxy) grouped(attrs []slog.Attr) []slog.Attr {
	if h.groups == "" {
		return attrs
	}
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = slog.String(h.groups+a.Key, a.Value.String())
	}
	return out
}

// logRecord is a slog.Record on the socket.
type logRecord struct {
	Time  time.Time
	Level int
	Msg   string
	Keys  []string
	Vals  []string
}

func (h *handlerProxy) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Time: r.Time, Level: int(r.Level), Msg: r.Message}
	add := func(a slog.Attr) bool {
		rec.Keys = append(rec.Keys, a.Key)
		rec.Vals = append(rec.Vals, a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(func(a slog.Attr) bool { return add(slog.String(h.groups+a.Key, a.Value.String())) })
	var err error
	_ = h.o.p.callTyped(0, "log", reflect.TypeFor[func(uint64, logRecord) error](), []any{h.o.handle, rec}, []any{&err})
	return err
}

func (p *peer) serveLog(handle uint64, rec logRecord) error {
	v, ok := p.exportedAs(handle)
	if !ok {
		return os.ErrInvalid
	}
	h, ok := v.Interface().(slog.Handler)
	if !ok {
		return os.ErrInvalid
	}
	r := slog.NewRecord(rec.Time, slog.Level(rec.Level), rec.Msg, 0)
	for i, k := range rec.Keys {
		r.AddAttrs(slog.String(k, rec.Vals[i]))
	}
	return h.Handle(context.Background(), r)
}
