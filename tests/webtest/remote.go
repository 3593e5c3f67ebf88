package webtest

import (
	"context"
	"net"

	"serverlab/tests/judge"
)

// The proxy of chapter 06's one-connection handler, for a judge whose
// subject runs the student's code (tests/judge).
func init() {
	judge.Proxy(func(o *judge.Object) Handler { return &handlerProxy{o} })
}

type handlerProxy struct{ o *judge.Object }

func (h *handlerProxy) ServeConn(ctx context.Context, conn net.Conn) {
	_ = h.o.Call("ServeConn", []any{ctx, conn})
}

func (h *handlerProxy) Close() (err error) {
	_ = h.o.Call("Close", nil, &err)
	return err
}
