//go:build unix

package judge

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// Object is the other process's object behind a proxy: a proxy's methods
// call Call.
type Object struct {
	p       *peer
	handle  uint64
	iface   reflect.Type // the interface the proxy implements
	methods []string     // the methods the object really has
}

// Has reports whether the object itself has the method (a proxy of a
// net.Listener asks whether the listener has AcceptFault, say).
func (o *Object) Has(method string) bool { return slices.Contains(o.methods, method) }

// Call calls the object's method with args and stores its results in the
// pointers results, typed as the proxy's interface declares the method. If
// the call cannot be made (the other process has gone), the results are
// zero, an error result holds the reason, and Call returns it.
func (o *Object) Call(method string, args []any, results ...any) error {
	m, ok := o.iface.MethodByName(method)
	if !ok {
		return fmt.Errorf("judge: %s has no method %s", o.iface, method)
	}
	return o.p.callTyped(o.handle, method, m.Type, args, results)
}

// callTyped calls handle's method (or, with handle 0, the service method)
// whose static signature is ft.
func (p *peer) callTyped(handle uint64, method string, ft reflect.Type, args []any, results []any) error {
	in := make([]reflect.Type, ft.NumIn())
	vals := make([]reflect.Value, ft.NumIn())
	for i := range in {
		in[i] = ft.In(i)
		if i < len(args) && args[i] != nil {
			vals[i] = reflect.ValueOf(args[i])
		} else {
			vals[i] = reflect.Zero(in[i])
		}
	}
	out := make([]reflect.Type, ft.NumOut())
	for i := range out {
		out[i] = ft.Out(i)
	}
	got, err := p.call(handle, method, vals, in, out)
	for i, r := range results {
		dst := reflect.ValueOf(r).Elem()
		switch {
		case err == nil:
			dst.Set(got[i])
		case dst.Type() == errorType:
			dst.Set(reflect.ValueOf(&err).Elem())
		}
	}
	return err
}

// funcProxy is a function of type ft that calls the other end's function.
func (p *peer) funcProxy(handle uint64, ft reflect.Type) reflect.Value {
	in := make([]reflect.Type, ft.NumIn())
	for i := range in {
		in[i] = ft.In(i)
	}
	out := make([]reflect.Type, ft.NumOut())
	for i := range out {
		out[i] = ft.Out(i)
	}
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		got, err := p.call(handle, "", args, in, out)
		if err == nil {
			return got
		}
		results := make([]reflect.Value, len(out))
		for i, t := range out {
			results[i] = reflect.Zero(t)
			if t == errorType {
				results[i] = reflect.ValueOf(&err).Elem()
			}
		}
		return results
	})
}

// proxies holds the registered proxy constructors, by interface type.
var proxies sync.Map // reflect.Type -> func(*Object) reflect.Value

// Proxy registers how to stand in for another process's object behind the
// interface I: ctor wraps the Object in a type whose methods call
// Object.Call. A proxy must be a pointer, so that it can be recognised when
// it is sent back home.
func Proxy[I any](ctor func(*Object) I) {
	t := reflect.TypeFor[I]()
	if t.Kind() != reflect.Interface {
		panic("judge.Proxy: " + t.String() + " is not an interface")
	}
	proxies.Store(t, func(o *Object) reflect.Value {
		v := reflect.New(t).Elem()
		v.Set(reflect.ValueOf(ctor(o)))
		return v
	})
}

type importKey struct {
	handle uint64
	t      reflect.Type
}

// objectProxy returns the proxy, of interface type t, of the other end's
// object handle: the same proxy each time.
func (p *peer) objectProxy(handle uint64, methods []string, t reflect.Type) (reflect.Value, error) {
	ctor, ok := proxies.Load(t)
	if !ok {
		return reflect.Zero(t), fmt.Errorf("no proxy for %s: register one with judge.Proxy", t)
	}
	key := importKey{handle, t}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.importsByType[key]; ok {
		return v, nil
	}
	o := &Object{p: p, handle: handle, iface: t, methods: methods}
	v := ctor.(func(*Object) reflect.Value)(o)
	p.importsByType[key] = v
	if id, ok := identity(v.Elem()); ok {
		p.importIDs[id] = handle
	}
	return v, nil
}
