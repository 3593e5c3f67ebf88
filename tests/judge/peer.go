//go:build unix

package judge

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"
)

// errLost is what a call returns once the other process has gone.
var errLost = errors.New("judge: the other process has gone (see the grader's report for why)")

// peer is one end of the judge–subject socket. Either end may call what the
// other exported; every incoming call runs on a goroutine of its own, so a
// callback may call back again.
type peer struct {
	link *link
	side string // "j" or "s": the prefix of the error ids this end makes

	mu             sync.Mutex
	nextCall       uint64
	pending        map[uint64]chan reply
	nextHandle     uint64
	exports        map[uint64]reflect.Value    // what the other end may call
	exportIDs      map[any]uint64              // an exported object's handle, by identity
	importsByType  map[importKey]reflect.Value // proxies of the other end's objects
	importIDs      map[any]uint64              // a proxy's handle at the other end, by identity
	errs           errTable
	services       map[string]reflect.Value
	lost           chan struct{}
	lostOnce       sync.Once
	cancels        map[uint64]func() // contexts the other end may cancel
	cancelledEarly map[uint64]bool   // cancels that arrived before their context (see serveCancel)
	lostReason     error
	inBytes        int64 // the data of the calls the other end made (admit)
}

type reply struct {
	m     *message
	files []*os.File
}

func newPeer(l *link, side string) *peer {
	p := &peer{
		link: l, side: side,
		pending:        map[uint64]chan reply{},
		exports:        map[uint64]reflect.Value{},
		exportIDs:      map[any]uint64{},
		importsByType:  map[importKey]reflect.Value{},
		importIDs:      map[any]uint64{},
		services:       map[string]reflect.Value{},
		cancels:        map[uint64]func(){},
		cancelledEarly: map[uint64]bool{},
		lost:           make(chan struct{}),
	}
	p.errs.init(side)
	p.service("read", p.serveRead)
	p.service("readLine", p.serveReadLine)
	p.service("cancel", p.serveCancel)
	p.service("listenerFD", p.serveListenerFD)
	p.service("log", p.serveLog)
	p.service("listenerAddr", p.serveListenerAddr)
	p.service("connAddr", p.serveConnAddr)
	return p
}

// service makes fn callable by name from the other end.
func (p *peer) service(name string, fn any) {
	p.services[name] = reflect.ValueOf(fn)
}

// loop reads messages until the socket closes.
func (p *peer) loop() {
	for {
		m, files, err := p.link.receive()
		if err != nil {
			p.lose(err)
			return
		}
		if m.Reply {
			p.mu.Lock()
			ch := p.pending[m.Call]
			delete(p.pending, m.Call)
			p.mu.Unlock()
			if ch != nil {
				ch <- reply{m, files}
			}
			continue
		}
		if !p.admit(m) {
			for _, f := range files {
				f.Close()
			}
			return
		}
		go p.serve(m, files)
	}
}

func (p *peer) lose(err error) {
	p.lostOnce.Do(func() {
		p.mu.Lock()
		p.lostReason = err
		p.mu.Unlock()
		close(p.lost)
		p.link.close()
	})
}

// export gives v a handle the other end can call, the same handle each time
// for the same object.
func (p *peer) export(v reflect.Value) uint64 {
	key, comparable := identity(v)
	p.mu.Lock()
	defer p.mu.Unlock()
	if comparable {
		if h, ok := p.exportIDs[key]; ok {
			return h
		}
	}
	p.nextHandle++
	h := p.nextHandle
	p.exports[h] = v
	if comparable {
		p.exportIDs[key] = h
	}
	return h
}

// identity is the key that recognises the same object again: its pointer,
// for the kinds that have one.
func identity(v reflect.Value) (any, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.UnsafePointer:
		return v.Pointer(), true
	case reflect.Func:
		return nil, false
	}
	if v.Type().Comparable() {
		return v.Interface(), true
	}
	return nil, false
}

// call calls the other end's handle (0: its service named method) with args
// of the static types in, and decodes its results as out.
func (p *peer) call(handle uint64, method string, args []reflect.Value, in, out []reflect.Type) ([]reflect.Value, error) {
	e := encoder{p: p}
	m := &message{Handle: handle, Method: method, Args: make([]value, len(args))}
	for i, a := range args {
		v, err := e.encode(a, in[i])
		if err != nil {
			e.closeFiles()
			return nil, fmt.Errorf("judge: argument %d of %s: %w", i, describeCall(handle, method), err)
		}
		m.Args[i] = v
	}
	ch := make(chan reply, 1)
	p.mu.Lock()
	p.nextCall++
	m.Call = p.nextCall
	p.pending[m.Call] = ch
	p.mu.Unlock()
	if err := p.link.send(m, e.files); err != nil {
		p.lose(err)
	}
	var r reply
	select {
	case r = <-ch:
	case <-p.lost:
		p.mu.Lock()
		delete(p.pending, m.Call)
		p.mu.Unlock()
		return nil, p.lostErr()
	}
	d := decoder{p: p, files: r.files}
	defer d.closeUnclaimed()
	if r.m.Fail != "" {
		return nil, errors.New(r.m.Fail)
	}
	if len(r.m.Args) != len(out) {
		return nil, fmt.Errorf("judge: %s returned %d results, want %d", describeCall(handle, method), len(r.m.Args), len(out))
	}
	results := make([]reflect.Value, len(out))
	for i, t := range out {
		v, err := d.decode(r.m.Args[i], t)
		if err != nil {
			return nil, fmt.Errorf("judge: result %d of %s: %w", i, describeCall(handle, method), err)
		}
		results[i] = v
	}
	return results, nil
}

func describeCall(handle uint64, method string) string {
	if handle == 0 {
		return "service " + method
	}
	if method == "" {
		return fmt.Sprintf("function #%d", handle)
	}
	return fmt.Sprintf("#%d.%s", handle, method)
}

// serve runs one incoming call and sends its reply, with the descriptors
// its results carry (an accepted connection, say).
func (p *peer) serve(m *message, files []*os.File) {
	d := decoder{p: p, files: files}
	out := &message{Call: m.Call, Reply: true}
	results, replyFiles, err := p.invoke(m, &d)
	if err != nil {
		out.Fail = err.Error()
	} else {
		out.Args = results
	}
	d.closeUnclaimed()
	if err := p.link.send(out, replyFiles); err != nil {
		p.lose(err)
	}
}

// invoke makes the call m names and encodes its results with their static
// types.
func (p *peer) invoke(m *message, d *decoder) ([]value, []*os.File, error) {
	fn, err := p.target(m)
	if err != nil {
		return nil, nil, err
	}
	ft := fn.Type()
	if len(m.Args) != ft.NumIn() {
		return nil, nil, fmt.Errorf("judge: %s takes %d arguments, got %d", describeCall(m.Handle, m.Method), ft.NumIn(), len(m.Args))
	}
	args := make([]reflect.Value, len(m.Args))
	for i := range m.Args {
		a, err := d.decode(m.Args[i], ft.In(i))
		if err != nil {
			return nil, nil, fmt.Errorf("judge: argument %d of %s: %w", i, describeCall(m.Handle, m.Method), err)
		}
		args[i] = a
	}
	var results []reflect.Value
	if ft.IsVariadic() {
		results = fn.CallSlice(args)
	} else {
		results = fn.Call(args)
	}
	e := encoder{p: p}
	out := make([]value, len(results))
	for i, r := range results {
		v, err := e.encode(r, ft.Out(i))
		if err != nil {
			e.closeFiles()
			return nil, nil, fmt.Errorf("judge: result %d of %s: %w", i, describeCall(m.Handle, m.Method), err)
		}
		out[i] = v
	}
	return out, e.files, nil
}

func (p *peer) target(m *message) (reflect.Value, error) {
	if m.Handle == 0 {
		fn, ok := p.services[m.Method]
		if !ok {
			return reflect.Value{}, fmt.Errorf("judge: no service %q", m.Method)
		}
		return fn, nil
	}
	p.mu.Lock()
	v, ok := p.exports[m.Handle]
	p.mu.Unlock()
	if !ok {
		return reflect.Value{}, fmt.Errorf("judge: no object #%d", m.Handle)
	}
	if m.Method == "" {
		return v, nil
	}
	fn := v.MethodByName(m.Method)
	if !fn.IsValid() {
		return reflect.Value{}, fmt.Errorf("judge: %s has no method %s", v.Type(), m.Method)
	}
	return fn, nil
}
