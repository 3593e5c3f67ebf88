package discoverytest

import (
	"serverlab/tests/judge"
	"serverlab/tools/given/users"
)

// The proxy of exercise 1.3's store, for a judge whose subject runs the
// student's code (tests/judge).
func init() {
	judge.Proxy(func(o *judge.Object) Store { return &storeProxy{o} })
}

type storeProxy struct{ o *judge.Object }

func (s *storeProxy) Register(u users.User) (err error) {
	_ = s.o.Call("Register", []any{u}, &err)
	return err
}

func (s *storeProxy) Lookup(name string) (u users.User, ok bool) {
	_ = s.o.Call("Lookup", []any{name}, &u, &ok)
	return u, ok
}

func (s *storeProxy) Close() (err error) {
	_ = s.o.Call("Close", nil, &err)
	return err
}
