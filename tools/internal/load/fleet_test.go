package load_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"serverlab/tools/internal/load"
)

// fleet is a fake protocol for the driver tests. It counts set-ups, closes
// and requests per client slot, and catches a driver that lets one client
// have two requests outstanding.
type fleet struct {
	// setup, if set, decides whether set-up number n (0-based) of client id
	// fails; do decides the outcome of request n of client id.
	setup func(id, n int) error
	do    func(ctx context.Context, id, n int) error

	mu          sync.Mutex
	setups      map[int]int // set-up attempts per client
	calls       map[int]int // Do calls per client
	outstanding map[int]int
	overlaps    int // Do entered while the same client had one outstanding
	live        int // clients set up and not yet closed
	closedTwice int
}

func newFleet() *fleet {
	return &fleet{setups: map[int]int{}, calls: map[int]int{}, outstanding: map[int]int{}}
}

func (f *fleet) NewClient(ctx context.Context, id int) (load.Client, error) {
	f.mu.Lock()
	n := f.setups[id]
	f.setups[id]++
	f.mu.Unlock()
	if f.setup != nil {
		if err := f.setup(id, n); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	f.live++
	f.mu.Unlock()
	return &fakeClient{fleet: f, id: id}, nil
}

type fakeClient struct {
	fleet  *fleet
	id     int
	closed bool
}

func (c *fakeClient) Do(ctx context.Context) error {
	f := c.fleet
	f.mu.Lock()
	n := f.calls[c.id]
	f.calls[c.id]++
	f.outstanding[c.id]++
	if f.outstanding[c.id] > 1 {
		f.overlaps++
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.outstanding[c.id]--
		f.mu.Unlock()
	}()
	if f.do == nil {
		return nil
	}
	return f.do(ctx, c.id, n)
}

func (c *fakeClient) Close() error {
	f := c.fleet
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.closed {
		f.closedTwice++
		return fmt.Errorf("client %d closed twice", c.id)
	}
	c.closed = true
	f.live--
	return nil
}

func (f *fleet) totalCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	total := 0
	for _, n := range f.calls {
		total += n
	}
	return total
}

// checkClean fails the test if a client had two requests outstanding, was
// closed twice, or was left open when the run ended.
func (f *fleet) checkClean(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.overlaps != 0 {
		t.Errorf("a client had two requests outstanding %d times, want never", f.overlaps)
	}
	if f.live != 0 || f.closedTwice != 0 {
		t.Errorf("after the run: %d clients left open, %d closed twice; want 0 and 0", f.live, f.closedTwice)
	}
}
