//go:build unix

package judge

import (
	"fmt"
	"os"
	"reflect"
	"slices"
)

// encoder turns Go values into values for one message, collecting the files
// whose descriptors go with it.
type encoder struct {
	p     *peer
	files []*os.File
}

// attach adds f to the message and returns its 1-based index.
func (e *encoder) attach(f *os.File) int {
	e.files = append(e.files, f)
	return len(e.files)
}

func (e *encoder) closeFiles() {
	for _, f := range e.files {
		f.Close()
	}
	e.files = nil
}

var (
	errorType = reflect.TypeFor[error]()
	bytesType = reflect.TypeFor[[]byte]()
)

// encode encodes v, whose static type is t.
func (e *encoder) encode(v reflect.Value, t reflect.Type) (value, error) {
	if c, ok := codecFor(t); ok {
		if isNil(v) {
			return value{Nil: true}, nil
		}
		return c.encode(e, v)
	}
	switch t.Kind() {
	case reflect.Interface:
		return e.encodeInterface(v, t)
	case reflect.Func:
		if v.IsNil() {
			return value{Nil: true}, nil
		}
		return value{Handle: e.p.export(v)}, nil
	case reflect.Pointer:
		if v.IsNil() {
			return value{Nil: true}, nil
		}
		inner, err := e.encode(v.Elem(), t.Elem())
		if err != nil {
			return value{}, err
		}
		return value{Elems: []value{inner}}, nil
	case reflect.Struct:
		return e.encodeStruct(v, t)
	case reflect.Slice:
		if v.IsNil() {
			return value{Nil: true}, nil
		}
		if t == bytesType || t.Elem().Kind() == reflect.Uint8 {
			return value{Bytes: slices.Clone(v.Bytes())}, nil
		}
		return e.encodeElems(v, t.Elem())
	case reflect.Array:
		return e.encodeElems(v, t.Elem())
	case reflect.Map:
		return e.encodeMap(v, t)
	case reflect.Bool:
		if v.Bool() {
			return value{Int: 1}, nil
		}
		return value{}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return value{Int: v.Int()}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return value{Uint: v.Uint()}, nil
	case reflect.Float32, reflect.Float64:
		return value{Float: v.Float()}, nil
	case reflect.String:
		return value{Str: v.String()}, nil
	}
	return value{}, fmt.Errorf("cannot send a %s across processes", t)
}

func isNil(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return !v.IsValid()
}

func (e *encoder) encodeStruct(v reflect.Value, t reflect.Type) (value, error) {
	out := value{Elems: make([]value, t.NumField())}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			return value{}, fmt.Errorf("%s has an unexported field %s: it cannot cross processes (give it a codec)", t, f.Name)
		}
		fv, err := e.encode(v.Field(i), f.Type)
		if err != nil {
			return value{}, fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		out.Elems[i] = fv
	}
	return out, nil
}

func (e *encoder) encodeElems(v reflect.Value, elem reflect.Type) (value, error) {
	out := value{Elems: make([]value, v.Len())}
	for i := range v.Len() {
		ev, err := e.encode(v.Index(i), elem)
		if err != nil {
			return value{}, err
		}
		out.Elems[i] = ev
	}
	return out, nil
}

func (e *encoder) encodeMap(v reflect.Value, t reflect.Type) (value, error) {
	if v.IsNil() {
		return value{Nil: true}, nil
	}
	out := value{}
	it := v.MapRange()
	for it.Next() {
		k, err := e.encode(it.Key(), t.Key())
		if err != nil {
			return value{}, err
		}
		val, err := e.encode(it.Value(), t.Elem())
		if err != nil {
			return value{}, err
		}
		out.Elems = append(out.Elems, k, val)
	}
	return out, nil
}

// encodeInterface encodes the value behind an interface: an error by its
// text and identities, a proxy going home by its handle, anything with a
// codec by that, and any other object by a handle of its own.
func (e *encoder) encodeInterface(v reflect.Value, t reflect.Type) (value, error) {
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return value{Nil: true}, nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return value{Nil: true}, nil
	}
	if t == errorType {
		return value{Err: e.p.errs.encode(v.Interface().(error))}, nil
	}
	if dr, ok := v.Interface().(*dataReader); ok { // crosses whole (datareader.go)
		data, how, err := dr.take()
		return value{Bytes: data, Str: string(how), Kind: "datareader"}, err
	}
	if key, ok := identity(v); ok {
		e.p.mu.Lock()
		h, home := e.p.importIDs[key]
		e.p.mu.Unlock()
		if home {
			return value{Handle: h, Home: true}, nil
		}
	}
	return value{Handle: e.p.export(v), Methods: methodNames(v.Type())}, nil
}

func methodNames(t reflect.Type) []string {
	names := make([]string, 0, t.NumMethod())
	for i := range t.NumMethod() {
		names = append(names, t.Method(i).Name)
	}
	return names
}

// decoder turns a message's values back into Go values.
type decoder struct {
	p       *peer
	files   []*os.File
	claimed []bool
}

// file claims the message's descriptor i (1-based).
func (d *decoder) file(i int) (*os.File, error) {
	if i < 1 || i > len(d.files) {
		return nil, fmt.Errorf("descriptor %d of %d", i, len(d.files))
	}
	if d.claimed == nil {
		d.claimed = make([]bool, len(d.files))
	}
	if d.claimed[i-1] {
		return nil, fmt.Errorf("descriptor %d claimed twice", i)
	}
	d.claimed[i-1] = true
	return d.files[i-1], nil
}

func (d *decoder) closeUnclaimed() {
	for i, f := range d.files {
		if d.claimed == nil || !d.claimed[i] {
			f.Close()
		}
	}
}

// decode decodes x as a value of type t.
func (d *decoder) decode(x value, t reflect.Type) (reflect.Value, error) {
	if x.Nil {
		return reflect.Zero(t), nil
	}
	if c, ok := codecFor(t); ok {
		return c.decode(d, x, t)
	}
	out := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Interface:
		return d.decodeInterface(x, t)
	case reflect.Func:
		return d.p.funcProxy(x.Handle, t), nil
	case reflect.Pointer:
		if len(x.Elems) != 1 {
			return out, fmt.Errorf("a %s without its value", t)
		}
		inner, err := d.decode(x.Elems[0], t.Elem())
		if err != nil {
			return out, err
		}
		ptr := reflect.New(t.Elem())
		ptr.Elem().Set(inner)
		return ptr, nil
	case reflect.Struct:
		if len(x.Elems) != t.NumField() {
			return out, fmt.Errorf("%s: %d fields, want %d (are both processes built from the same course?)", t, len(x.Elems), t.NumField())
		}
		for i := range t.NumField() {
			fv, err := d.decode(x.Elems[i], t.Field(i).Type)
			if err != nil {
				return out, fmt.Errorf("%s.%s: %w", t.Name(), t.Field(i).Name, err)
			}
			out.Field(i).Set(fv)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			b := x.Bytes
			if b == nil {
				b = []byte{}
			}
			return reflect.ValueOf(b).Convert(t), nil
		}
		out = reflect.MakeSlice(t, len(x.Elems), len(x.Elems))
		for i := range x.Elems {
			ev, err := d.decode(x.Elems[i], t.Elem())
			if err != nil {
				return out, err
			}
			out.Index(i).Set(ev)
		}
	case reflect.Array:
		for i := range min(len(x.Elems), t.Len()) {
			ev, err := d.decode(x.Elems[i], t.Elem())
			if err != nil {
				return out, err
			}
			out.Index(i).Set(ev)
		}
	case reflect.Map:
		out = reflect.MakeMapWithSize(t, len(x.Elems)/2)
		for i := 0; i+1 < len(x.Elems); i += 2 {
			k, err := d.decode(x.Elems[i], t.Key())
			if err != nil {
				return out, err
			}
			v, err := d.decode(x.Elems[i+1], t.Elem())
			if err != nil {
				return out, err
			}
			out.SetMapIndex(k, v)
		}
	case reflect.Bool:
		out.SetBool(x.Int != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		out.SetInt(x.Int)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		out.SetUint(x.Uint)
	case reflect.Float32, reflect.Float64:
		out.SetFloat(x.Float)
	case reflect.String:
		out.SetString(x.Str)
	default:
		return out, fmt.Errorf("cannot receive a %s across processes", t)
	}
	return out, nil
}

// decodeInterface decodes an error, an object coming home, or a proxy of
// one of the other end's objects.
func (d *decoder) decodeInterface(x value, t reflect.Type) (reflect.Value, error) {
	if x.Err != nil {
		err := d.p.errs.decode(x.Err)
		v := reflect.ValueOf(err)
		if !v.Type().Implements(t) {
			return reflect.Zero(t), fmt.Errorf("an error where a %s was expected", t)
		}
		out := reflect.New(t).Elem()
		out.Set(v)
		return out, nil
	}
	if x.Kind == "datareader" {
		r, err := dataReaderFrom(x.Bytes, x.Str)
		if err != nil {
			return reflect.Zero(t), err
		}
		if !reflect.TypeOf(r).Implements(t) {
			return reflect.Zero(t), fmt.Errorf("a DataReader where a %s was expected", t)
		}
		out := reflect.New(t).Elem()
		out.Set(reflect.ValueOf(r))
		return out, nil
	}
	if x.Home {
		d.p.mu.Lock()
		v, ok := d.p.exports[x.Handle]
		d.p.mu.Unlock()
		if !ok {
			return reflect.Zero(t), fmt.Errorf("object #%d came home, but it was never sent", x.Handle)
		}
		if !v.Type().Implements(t) && v.Type() != t {
			return reflect.Zero(t), fmt.Errorf("object #%d is a %s, not a %s", x.Handle, v.Type(), t)
		}
		out := reflect.New(t).Elem()
		out.Set(v)
		return out, nil
	}
	return d.p.objectProxy(x.Handle, x.Methods, t)
}
