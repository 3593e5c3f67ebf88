package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"serverlab/tools/given/chatcore/proto"
)

// The kill test: writers in channels of -members each, spread over three
// servers so that every channel has members on all of them. Each writer
// sends a message, waits for its echo (or an error), pauses, and again, and
// records every message of its channel it receives. Halfway, kill -9 of the
// third server: its writers reconnect to the next one. At the end a marker
// closes every channel, and the test checks
//
//   - the history, read on a survivor: every acknowledged message in it,
//     none twice;
//   - every connection's deliveries: exactly once and in the channel's one
//     order, without a gap — what a connection received is one run of the
//     channel's history, and for a connection that lasted, one that ends at
//     the marker. Its survivors went through the cluster's new elections
//     (their consumers reset) without noticing.

// killConfig is the kill test's flags.
type killConfig struct {
	writers, members   int
	duration, interval time.Duration
}

// killStats are the kill test's counts and records.
type killStats struct {
	sent, acked, failed, reconnects atomic.Int64
	interval                        time.Duration // a writer's pause after each echo

	mu         sync.Mutex
	acks       map[string]bool // content → acknowledged (echoed)
	refused    map[string]bool // content → told "not stored"
	longest    time.Duration   // the longest wait for one echo
	deliveries []*delivery
}

// delivery is what one connection of a writer received in its channel, in
// the order it arrived.
type delivery struct {
	writer int
	got    []string
	lasted bool // the connection lasted until the writers stopped: it must get the marker
}

func (st *killStats) newDelivery(writer int) *delivery {
	d := &delivery{writer: writer}
	st.mu.Lock()
	st.deliveries = append(st.deliveries, d)
	st.mu.Unlock()
	return d
}

// markerOf is the last message of a channel's run, written once every
// writer has stopped.
func markerOf(ch uint32) string { return fmt.Sprintf("kill-marker-%d", ch) }

// killTest runs the kill test on a cluster of three servers.
func killTest(ctx context.Context, bin string, extra []string, kc killConfig) error {
	c, err := startCluster(ctx, bin, extra, 3)
	if err != nil {
		return err
	}
	defer c.stop()
	channels, err := makeChannels(c.addrs[0], (kc.writers+kc.members-1)/kc.members)
	if err != nil {
		return err
	}
	st := &killStats{acks: map[string]bool{}, refused: map[string]bool{}, interval: kc.interval}
	stopAt := time.Now().Add(kc.duration)
	var writers, sending sync.WaitGroup
	errs := make([]error, kc.writers)
	for i := range kc.writers {
		sending.Add(1)
		writers.Go(func() {
			errs[i] = runWriter(ctx, c.addrs, i, channels[i/kc.members], stopAt, st, sync.OnceFunc(sending.Done))
		})
	}
	killed := time.Now().Add(kc.duration / 2)
	time.Sleep(time.Until(killed)) // the schedule: the kill comes halfway
	victim, why := c.leader(ctx)
	c.cmds[victim].Process.Signal(syscall.SIGKILL)
	fmt.Printf("kill -9 of server %d (%s, %s) at %s\n", victim+1, c.addrs[victim], why, time.Now().Format(time.TimeOnly))
	survivor := c.addrs[(victim+1)%len(c.addrs)]
	sending.Wait()
	markErr := writeMarkers(survivor, channels)
	writers.Wait()
	if err := errors.Join(append(errs, markErr)...); err != nil {
		return err
	}
	h, err := readHistories(survivor, channels)
	if err != nil {
		return err
	}
	lost, dup, stored, maybe := h.check(st)
	runs, toEnd, bad := checkDeliveries(h, st, channels, kc.members)
	fmt.Printf("| writers | channels | sent | acknowledged | told not stored (stored after all) | reconnects | stored | acknowledged lost | duplicated | deliveries checked (lasting) | not exactly once in order | longest wait for an echo |\n")
	fmt.Printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Printf("| %d | %d | %d | %d | %d (%d) | %d | %d | %d | %d | %d (%d) | %d | %.2f s |\n", kc.writers, len(channels),
		st.sent.Load(), st.acked.Load(), st.failed.Load(), maybe, st.reconnects.Load(), stored, lost, dup, runs, toEnd, bad,
		st.longest.Seconds())
	if lost > 0 || dup > 0 || bad > 0 {
		return fmt.Errorf("kill test: %d acknowledged messages lost, %d duplicated in the history, %d deliveries "+
			"not exactly once in the channel's order", lost, dup, bad)
	}
	return nil
}

// leader returns the server whose node leads the chat stream, the node a
// kill hurts most: every server's consumer of the stream lives there, so
// every survivor's consumer must be made again, from where it was. If the
// cluster does not say, the last server.
func (c *cluster) leader(ctx context.Context) (int, string) {
	last := len(c.cmds) - 1
	nc, err := nats.Connect(strings.Join(c.nats, ","), nats.Timeout(2*time.Second))
	if err != nil {
		return last, fmt.Sprintf("the leader unknown: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return last, fmt.Sprintf("the leader unknown: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names := js.StreamNames(ctx)
	for name := range names.Name() {
		if strings.HasPrefix(name, "KV_") {
			continue // the buckets' streams
		}
		s, err := js.Stream(ctx, name)
		if err != nil || s.CachedInfo().Cluster == nil {
			continue
		}
		for i := range c.cmds {
			if nodeName(i) == s.CachedInfo().Cluster.Leader {
				return i, fmt.Sprintf("node %s, the leader of stream %s", nodeName(i), name)
			}
		}
	}
	return last, "the leader unknown"
}

// makeChannels creates the test's n channels on the server at addr.
func makeChannels(addr string, n int) ([]uint32, error) {
	w, err := loggedIn(addr, "kill-setup")
	if err != nil {
		return nil, err
	}
	defer w.nc.Close()
	channels := make([]uint32, n)
	for i := range channels {
		m, err := w.call(proto.CreateChannelRequest{Name: fmt.Sprintf("kill-channel-%d", i), RequestID: uint64(10 + i)})
		if err != nil {
			return nil, err
		}
		r, ok := m.(proto.CreateChannelResponse)
		if !ok {
			return nil, fmt.Errorf("create channel kill-channel-%d: %v", i, m)
		}
		channels[i] = r.Channel.ID
	}
	return channels, nil
}

// writeMarkers writes every channel's marker, from a member of each in
// turn, once every writer has stopped sending.
func writeMarkers(addr string, channels []uint32) error {
	w, err := loggedIn(addr, "kill-marker")
	if err != nil {
		return err
	}
	defer w.nc.Close()
	for i, ch := range channels {
		if _, err := w.call(proto.JoinChannelRequest{ChannelID: ch, RequestID: uint64(10 + i)}); err != nil {
			return err
		}
		if err := w.send(proto.WriteChat{Content: markerOf(ch)}); err != nil {
			return err
		}
		if err := w.awaitEcho(nil, ch, markerOf(ch), 30*time.Second); err != nil {
			return fmt.Errorf("marker of channel %d: %w", ch, err)
		}
	}
	return nil
}

// runWriter is writer i of channel ch: on server i%3, then on the next one
// whenever its connection breaks. It sends one message at a time and waits
// for its echo (or an error) until stopAt, calls stopped, and reads on
// until its channel's marker.
func runWriter(ctx context.Context, addrs []string, i int, ch uint32, stopAt time.Time, st *killStats, stopped func()) error {
	defer stopped()
	name := fmt.Sprintf("kill-writer-%d", i)
	n := 0
	for server := i % len(addrs); time.Now().Before(stopAt); server = (server + 1) % len(addrs) {
		w, err := dialWriter(addrs[server])
		if err != nil {
			continue // the killed one
		}
		if err := w.setUp(name, ch, stopAt); err != nil {
			w.nc.Close()
			continue
		}
		d := st.newDelivery(i)
		n, err = w.writeUntil(name, d, ch, n, stopAt, st)
		if err == nil {
			d.lasted = true
			stopped()
			if err := w.awaitEcho(d, ch, markerOf(ch), time.Minute); err != nil {
				fmt.Fprintf(os.Stderr, "%s: waiting for the marker: %v\n", name, err)
			}
			w.nc.Close()
			break
		}
		w.nc.Close()
		st.reconnects.Add(1)
	}
	return ctx.Err()
}

// setUp registers (once), logs in (retrying while the session of a killed
// server has not expired) and joins channel ch.
func (w *writer) setUp(name string, ch uint32, stopAt time.Time) error {
	w.call(proto.CreateUserRequest{Name: name, Password: "pw", RequestID: 1})
	for {
		m, err := w.call(proto.AuthenticateRequest{Name: name, Password: "pw", RequestID: 2})
		if err != nil {
			return err
		}
		if _, ok := m.(proto.AuthenticateResponse); ok {
			break
		}
		if time.Now().After(stopAt) {
			return fmt.Errorf("%s: login: %v", name, m)
		}
		time.Sleep(200 * time.Millisecond) // the dead server's session key expires
	}
	_, err := w.call(proto.JoinChannelRequest{ChannelID: ch, RequestID: 4})
	return err
}

// writeUntil sends messages n, n+1, … until stopAt, each after the echo of
// the one before, recording in d what the channel delivers meanwhile; it
// returns the next number and the error that broke the connection (nil at
// stopAt).
func (w *writer) writeUntil(name string, d *delivery, ch uint32, n int, stopAt time.Time, st *killStats) (int, error) {
	for ; time.Now().Before(stopAt); n++ {
		content := fmt.Sprintf("%s #%d", name, n)
		start := time.Now()
		if err := w.send(proto.WriteChat{Content: content}); err != nil {
			return n, err
		}
		st.sent.Add(1)
		err := w.awaitEcho(d, ch, content, 15*time.Second)
		switch {
		case errors.Is(err, errRefused):
			st.failed.Add(1)
			st.mu.Lock()
			st.refused[content] = true
			st.mu.Unlock()
		case err != nil:
			return n + 1, err
		default:
			st.acked.Add(1)
			st.mu.Lock()
			st.acks[content] = true
			st.longest = max(st.longest, time.Since(start))
			st.mu.Unlock()
			time.Sleep(st.interval) // pacing: the load, not a wait for anything
		}
	}
	return n, nil
}

// errRefused is a message the server answered with an error (not stored).
var errRefused = errors.New("refused")

// awaitEcho reads until content arrives in channel ch, recording every
// message of ch in d (if set). An error frame ends the wait with errRefused.
func (w *writer) awaitEcho(d *delivery, ch uint32, content string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		m, err := w.next(time.Until(deadline))
		if err != nil {
			return err
		}
		switch m := m.(type) {
		case proto.ReceiveChat:
			if m.ChannelID != ch {
				continue
			}
			if d != nil {
				d.got = append(d.got, m.Content)
			}
			if m.Content == content {
				return nil
			}
		case proto.Error:
			return errRefused
		}
	}
}

// writer is one connection of the kill test.
type writer struct {
	nc net.Conn
	r  *bufio.Reader
}

func dialWriter(addr string) (*writer, error) {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	return &writer{nc: nc, r: bufio.NewReader(nc)}, nil
}

// loggedIn connects to addr as user name (registered if new).
func loggedIn(addr, name string) (*writer, error) {
	w, err := dialWriter(addr)
	if err != nil {
		return nil, err
	}
	w.call(proto.CreateUserRequest{Name: name, Password: "pw", RequestID: 1})
	m, err := w.call(proto.AuthenticateRequest{Name: name, Password: "pw", RequestID: 2})
	if err == nil {
		if _, ok := m.(proto.AuthenticateResponse); !ok {
			err = fmt.Errorf("%s: login: %v", name, m)
		}
	}
	if err != nil {
		w.nc.Close()
		return nil, err
	}
	return w, nil
}

// call sends req and returns its answer, skipping events.
func (w *writer) call(req proto.Requester) (proto.Message, error) {
	if err := w.send(req); err != nil {
		return nil, err
	}
	for {
		m, err := w.next(10 * time.Second)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == req.Request() {
			return m, nil
		}
	}
}

func (w *writer) send(m proto.Message) error {
	w.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return proto.Write(w.nc, m)
}

func (w *writer) next(d time.Duration) (proto.Message, error) {
	w.nc.SetReadDeadline(time.Now().Add(d))
	return proto.Read(w.r)
}

// histories are the channels' histories, read on a survivor, oldest first.
type histories map[uint32][]string

// readHistories reads every channel's history on the server at addr,
// retrying while the cluster may still be electing leaders.
func readHistories(addr string, channels []uint32) (histories, error) {
	w, err := loggedIn(addr, "kill-checker")
	if err != nil {
		return nil, err
	}
	defer w.nc.Close()
	h := histories{}
	for i, ch := range channels {
		var r proto.GetChatsResponse
		for try := 1; ; try++ {
			m, err := w.call(proto.GetChatsRequest{ChannelID: ch, Limit: 1000, RequestID: uint64(100*i + try)})
			if err != nil {
				return nil, err
			}
			var ok bool
			if r, ok = m.(proto.GetChatsResponse); ok {
				break
			}
			if try == 20 {
				return nil, fmt.Errorf("history of channel %d: %v", ch, m)
			}
			time.Sleep(500 * time.Millisecond) // between tries while leaders are elected
		}
		if len(r.Messages) >= 1000 {
			return nil, fmt.Errorf("channel %d holds 1000 messages or more, more than one reply gives: "+
				"fewer writers per channel (-members), a longer -interval or a shorter -duration", ch)
		}
		for _, msg := range r.Messages {
			h[ch] = append(h[ch], msg.Content)
		}
	}
	return h, nil
}

// check counts the acknowledged messages missing from the histories, the
// messages stored twice, and those whose sender was told "not stored" that
// are stored after all (the lesson's "maybe": a try in flight when the
// leader died).
func (h histories) check(st *killStats) (lost, dup, stored, maybe int) {
	seen := map[string]int{}
	for _, msgs := range h {
		for _, m := range msgs {
			seen[m]++
		}
	}
	for m, k := range seen {
		stored++
		dup += k - 1
		if st.refused[m] {
			maybe++
		}
	}
	contents := make([]string, 0, len(st.acks))
	for content := range st.acks {
		contents = append(contents, content)
	}
	slices.Sort(contents)
	for _, content := range contents {
		if seen[content] == 0 {
			lost++
			fmt.Fprintf(os.Stderr, "acknowledged, not in the history: %s\n", content)
		}
	}
	return lost, dup, stored, maybe
}

// checkDeliveries holds every connection's deliveries to its channel's
// history and prints the first few that depart from it.
func checkDeliveries(h histories, st *killStats, channels []uint32, members int) (runs, toEnd, bad int) {
	for _, d := range st.deliveries {
		runs++
		if d.lasted {
			toEnd++
		}
		ch := channels[d.writer/members]
		if why := checkDelivery(h[ch], d.got, d.lasted); why != "" {
			bad++
			if bad <= 5 {
				fmt.Fprintf(os.Stderr, "kill-writer-%d, channel %d: %s\n", d.writer, ch, why)
			}
		}
	}
	return runs, toEnd, bad
}

// checkDelivery says how got, what one connection received in a channel,
// departs from history, the channel's one order: "" if got is one
// contiguous run of it (so no message twice, none out of order, no gap),
// which, if toEnd, ends at the history's end.
func checkDelivery(history, got []string, toEnd bool) string {
	if len(got) == 0 {
		if toEnd {
			return "received nothing, not even the marker"
		}
		return ""
	}
	pos := make(map[string]int, len(history))
	for i, m := range history {
		pos[m] = i
	}
	start, ok := pos[got[0]]
	if !ok {
		return fmt.Sprintf("received %q, which is not in the history", got[0])
	}
	for j, m := range got {
		k := start + j
		_, stored := pos[m]
		switch {
		case !stored:
			return fmt.Sprintf("received %q, which is not in the history", m)
		case k < len(history) && history[k] == m:
			continue
		case slices.Contains(got[:j], m):
			return fmt.Sprintf("received %q twice", m)
		case k >= len(history):
			return fmt.Sprintf("received %q after the history's last message", m)
		default:
			return fmt.Sprintf("after %q received %q; the history has %q there (a gap or another order)",
				got[j-1], m, history[k])
		}
	}
	if end := start + len(got); toEnd && end != len(history) {
		return fmt.Sprintf("stopped at %q, %d messages before the history's end %q", got[len(got)-1],
			len(history)-end, history[len(history)-1])
	}
	return ""
}
