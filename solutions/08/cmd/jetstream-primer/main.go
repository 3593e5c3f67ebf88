// Command jetstream-primer runs, on a NATS server embedded in the process
// (no port; its store in a temporary folder, removed at the end), the four
// behaviours of JetStream that chapter 08's exercises rest on, and prints
// what each call answered:
//
//		go run ./solutions/08/cmd/jetstream-primer
//
//	 1. Publishing with a message id. The acknowledgement is the stream's word
//	    that it holds the message, and its sequence is the message's id for
//	    ever. The same id again, within the stream's duplicate window, is
//	    acknowledged with the first copy's sequence and not stored again.
//	 2. An ordered consumer reads a subject in the stream's order. Made again
//	    from an earlier point (a reset), it delivers what it had delivered:
//	    a high-water mark tells the copies from the new messages.
//	 3. Fetch(n) hands back a batch at once, but the batch ends only when n
//	    messages have come or its wait is over. Reading a whole Fetch(256)
//	    when a subject holds 4 messages costs the whole wait; stopping at the
//	    subject's last sequence, looked up first, costs none of it.
//	 4. A key-value bucket's Create writes a key only if it is absent, and the
//	    revision it returns can serve as an id; Put always writes.
//	 5. Update writes a key only at the revision it names: a lease. A server
//	    refreshes its session key at the revision it holds; a stale revision
//	    (the key was written since) is refused, and a Create then tells a key
//	    gone from a key another server holds.
//
// The program is a lesson, not a pattern to copy whole: it gives up at the
// first error and waits on nothing longer than a few seconds.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	nats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	streamName = "PRIMER"
	subject    = "primer.msg.7" // one subject per channel, as chapter 08's chat.msg.<id>
	// fetchWait bounds a fetch: how long a batch may wait to fill.
	fetchWait = time.Second
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "jetstream-primer:", err)
		os.Exit(1)
	}
}

// run starts the embedded NATS, connects to it in process, and runs the
// five steps, printing to w.
func run(w io.Writer) error {
	store, err := os.MkdirTemp("", "jetstream-primer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(store)
	ns, err := server.NewServer(&server.Options{JetStream: true, StoreDir: store, DontListen: true, NoSigs: true, NoLog: true})
	if err != nil {
		return err
	}
	ns.Start()
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	if !ns.ReadyForConnections(5 * time.Second) {
		return errors.New("the embedded NATS is not ready after 5s")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:       streamName,
		Subjects:   []string{"primer.msg.*"},
		Storage:    jetstream.MemoryStorage,
		Duplicates: time.Minute, // how long the stream remembers a message id
	})
	if err != nil {
		return err
	}
	for _, step := range []func(context.Context, io.Writer, jetstream.JetStream, jetstream.Stream) error{
		publishWithID, orderedAndReset, fetchBatches, createOrPut, updateLease,
	} {
		if err := step(ctx, w, js, stream); err != nil {
			return err
		}
	}
	return nil
}

// publishWithID stores three messages, then sends the first again with its
// id, as a retry whose first acknowledgement was lost would.
func publishWithID(ctx context.Context, w io.Writer, js jetstream.JetStream, stream jetstream.Stream) error {
	fmt.Fprintln(w, "1. Publish with a message id")
	send := func(text, id string) error {
		ack, err := js.Publish(ctx, subject, []byte(text), jetstream.WithMsgID(id))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "   %-8q id %s → stored at sequence %d, duplicate %v\n", text, id, ack.Sequence, ack.Duplicate)
		return nil
	}
	for i, text := range []string{"hello", "world", "again"} {
		if err := send(text, fmt.Sprintf("A-%d", i+1)); err != nil {
			return err
		}
	}
	if err := send("hello", "A-1"); err != nil { // the retry: same id
		return err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   the stream holds %d messages: the retry was acknowledged, not stored\n", info.State.Msgs)
	return nil
}

// orderedAndReset reads the subject with an ordered consumer, then with a
// new one from sequence 1, as a consumer reset would, and lets a
// high-water mark decide what to deliver.
func orderedAndReset(ctx context.Context, w io.Writer, js jetstream.JetStream, _ jetstream.Stream) error {
	fmt.Fprintln(w, "2. An ordered consumer, a reset, and a high-water mark")
	var hwm uint64
	read := func(label string, cfg jetstream.OrderedConsumerConfig, n int) error {
		cons, err := js.OrderedConsumer(ctx, streamName, cfg)
		if err != nil {
			return err
		}
		batch, err := cons.Fetch(n, jetstream.FetchMaxWait(fetchWait))
		if err != nil {
			return err
		}
		for msg := range batch.Messages() {
			meta, err := msg.Metadata()
			if err != nil {
				return err
			}
			seq := meta.Sequence.Stream
			if seq <= hwm {
				fmt.Fprintf(w, "   %s: sequence %d %-8q at or below the mark %d: a copy, delivered to nobody\n", label, seq, msg.Data(), hwm)
				continue
			}
			hwm = seq
			fmt.Fprintf(w, "   %s: sequence %d %-8q delivered; the mark is now %d\n", label, seq, msg.Data(), hwm)
		}
		return batch.Error()
	}
	filter := []string{subject}
	if err := read("first read", jetstream.OrderedConsumerConfig{FilterSubjects: filter}, 3); err != nil {
		return err
	}
	if _, err := js.Publish(ctx, subject, []byte("news"), jetstream.WithMsgID("A-4")); err != nil {
		return err
	}
	reset := jetstream.OrderedConsumerConfig{FilterSubjects: filter, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: 1}
	return read("after a reset", reset, 4)
}

// fetchBatches reads the same four messages twice with Fetch(256): once to
// the end of the batch, once up to the last sequence looked up first.
func fetchBatches(ctx context.Context, w io.Writer, js jetstream.JetStream, stream jetstream.Stream) error {
	fmt.Fprintf(w, "3. Fetch(256) on a subject that holds 4 messages, waiting at most %v\n", fetchWait)
	fetch := func() (jetstream.MessageBatch, error) {
		cons, err := js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
		if err != nil {
			return nil, err
		}
		return cons.Fetch(256, jetstream.FetchMaxWait(fetchWait))
	}
	start := time.Now()
	batch, err := fetch()
	if err != nil {
		return err
	}
	n := 0
	for range batch.Messages() {
		n++
	}
	fmt.Fprintf(w, "   to the end of the batch: %d messages in %v (the batch waited to fill)\n", n, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	last, err := stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		return err
	}
	if batch, err = fetch(); err != nil {
		return err
	}
	n = 0
	for msg := range batch.Messages() {
		n++
		if meta, err := msg.Metadata(); err != nil || meta.Sequence.Stream >= last.Sequence {
			break
		}
	}
	fmt.Fprintf(w, "   up to the last sequence (%d, looked up first): %d messages in %v\n", last.Sequence, n, time.Since(start).Round(time.Millisecond))
	_, err = stream.GetLastMsgForSubject(ctx, "primer.msg.8")
	if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("the last message of an empty subject: got %v, want jetstream.ErrMsgNotFound", err)
	}
	fmt.Fprintln(w, "   the last message of a subject with none: jetstream.ErrMsgNotFound (nothing to read, not a failure)")
	return nil
}

// createOrPut claims one key twice with Create, then with Put.
func createOrPut(ctx context.Context, w io.Writer, js jetstream.JetStream, _ jetstream.Stream) error {
	fmt.Fprintln(w, "4. A bucket: Create against Put")
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "primer_users"})
	if err != nil {
		return err
	}
	for _, server := range []string{"server A", "server B"} {
		rev, err := kv.Create(ctx, "alice", []byte(server))
		switch {
		case errors.Is(err, jetstream.ErrKeyExists):
			fmt.Fprintf(w, "   Create(alice) from %s: jetstream.ErrKeyExists: %s lost the race\n", server, server)
		case err != nil:
			return err
		default:
			fmt.Fprintf(w, "   Create(alice) from %s: created at revision %d\n", server, rev)
		}
	}
	rev, err := kv.Put(ctx, "alice", []byte("server B"))
	if err != nil {
		return err
	}
	e, err := kv.Get(ctx, "alice")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   Put(alice) from server B: written at revision %d; alice now belongs to %q\n", rev, e.Value())
	return nil
}

// updateLease holds a session key as a lease: server A creates it, refreshes
// it at its revision, fails to refresh it at a revision gone stale, and
// releases it at its own; server B then takes the key, and A's refresh at
// its old lease is refused and its Create says whose the key is now.
func updateLease(ctx context.Context, w io.Writer, js jetstream.JetStream, _ jetstream.Stream) error {
	fmt.Fprintln(w, "5. A lease: Update at a revision")
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "primer_sessions", TTL: time.Minute})
	if err != nil {
		return err
	}
	const key = "s.1"
	lease, err := kv.Create(ctx, key, []byte("server A"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   Create(s.1) from server A: the lease is revision %d\n", lease)
	first := lease
	if lease, err = kv.Update(ctx, key, []byte("server A"), lease); err != nil {
		return err
	}
	fmt.Fprintf(w, "   Update(s.1, %d) from server A: refreshed; the lease is now revision %d\n", first, lease)
	if _, err := kv.Update(ctx, key, []byte("server A"), first); !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return fmt.Errorf("an Update at a stale revision: got %v, want jetstream.ErrKeyRevisionMismatch", err)
	}
	fmt.Fprintf(w, "   Update(s.1, %d) again: jetstream.ErrKeyRevisionMismatch: the key was written since revision %d\n", first, first)
	if err := kv.Delete(ctx, key, jetstream.LastRevision(lease)); err != nil {
		return err
	}
	theirs, err := kv.Create(ctx, key, []byte("server B"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   Delete(s.1) at revision %d: released; Create(s.1) from server B: revision %d\n", lease, theirs)
	if _, err := kv.Update(ctx, key, []byte("server A"), lease); !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return fmt.Errorf("an Update at a released lease: got %v, want jetstream.ErrKeyRevisionMismatch", err)
	}
	if _, err := kv.Create(ctx, key, []byte("server A")); !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("a Create of a key another server holds: got %v, want jetstream.ErrKeyExists", err)
	}
	fmt.Fprintf(w, "   Update(s.1, %d) from server A: jetstream.ErrKeyRevisionMismatch; its Create: jetstream.ErrKeyExists: "+
		"the key is another server's\n", lease)
	return nil
}
