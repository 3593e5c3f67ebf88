package jobtest

import "serverlab/tests/judge"

// The proxy of exercise 3.2's queue, for a judge whose subject runs the
// student's code (tests/judge).
func init() {
	judge.Proxy(func(o *judge.Object) Queue { return &queueProxy{o} })
	judge.Proxy(func(o *judge.Object) BytesQueue { return &bytesQueueProxy{o} })
}

type queueProxy struct{ o *judge.Object }

func (q *queueProxy) Put(item int) (err error) {
	_ = q.o.Call("Put", []any{item}, &err)
	return err
}

func (q *queueProxy) Get() (item int, ok bool) {
	_ = q.o.Call("Get", nil, &item, &ok)
	return item, ok
}

func (q *queueProxy) Close() { _ = q.o.Call("Close", nil) }

type bytesQueueProxy struct{ o *judge.Object }

func (q *bytesQueueProxy) Put(item []byte) (err error) {
	_ = q.o.Call("Put", []any{item}, &err)
	return err
}

func (q *bytesQueueProxy) Get() (item []byte, ok bool) {
	_ = q.o.Call("Get", nil, &item, &ok)
	return item, ok
}

func (q *bytesQueueProxy) Close() { _ = q.o.Call("Close", nil) }
