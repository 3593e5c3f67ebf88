package chatscaletest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	nats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
)

// The contract the lesson fixes (chapters/08/README.md): where the servers keep
// what they share.
const (
	streamName     = "CHAT"
	msgSubject     = "chat.msg."
	sessionsBucket = "chat_sessions"
	usersBucket    = "chat_users"
)

// storedChat is a chat message's body in the stream.
type storedChat struct {
	User    uint32 `json:"user"`
	Content string `json:"content"`
}

// natsNode is one NATS server the suite runs in its own process, on a port
// reserved before anything started, with its store in a folder of the
// check: stop and start it again, and it comes back on the same port with
// what it had.
type natsNode struct {
	k       *testkit.T
	name    string
	port    int
	cluster int   // route port, 0: not clustered
	routes  []int // the other nodes' route ports
	store   string
	srv     *server.Server
}

// reservePorts returns n free ports of 127.0.0.1, all chosen before any is
// used: a port chosen by a server as it starts can be one another node is
// about to take.
func reservePorts(k *testkit.T, n int) []int {
	k.Helper()
	lns := make([]net.Listener, n)
	ports := make([]int, n)
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			k.Fatalf("reserve a port: %v", err)
		}
		lns[i], ports[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// nats-server's goroutines are never counted as the student's leak: under
// go test the suite's NATS shares the process with the student's server,
// and a server of the student's own that embeds NATS (DBPath) shuts it
// down with Shutdown, after which nats-server ends its consumers'
// goroutines in its own time. The package is linked into judge and
// subject alike, so this holds in both.
func init() { judge.IgnoreGoroutinesOf("github.com/nats-io/nats-server/v2/server.") }

// startNATS runs one JetStream node alone.
func startNATS(k *testkit.T) *natsNode {
	k.Helper()
	n := &natsNode{k: k, name: "nats", port: reservePorts(k, 1)[0], store: filepath.Join(k.TempDir(), "nats")}
	n.start()
	k.Cleanup(n.stop)
	return n
}

// startCluster runs three JetStream nodes routed to each other and waits
// until JetStream has a leader that sees every peer.
func startCluster(k *testkit.T) []*natsNode {
	k.Helper()
	ports := reservePorts(k, 6)
	nodes := make([]*natsNode, 3)
	for i := range nodes {
		nodes[i] = &natsNode{k: k, name: fmt.Sprintf("n%d", i+1), port: ports[i], cluster: ports[3+i],
			store: filepath.Join(k.TempDir(), fmt.Sprintf("nats-%d", i+1))}
		for j := range 3 {
			if j != i {
				nodes[i].routes = append(nodes[i].routes, ports[3+j])
			}
		}
	}
	for _, n := range nodes {
		n.start()
		k.Cleanup(n.stop)
	}
	// A first election can miss and wait out a timeout of several seconds
	// inside nats-server: the limit is generous.
	deadline := time.Now().Add(3 * testkit.IOTimeout)
	for !clusterReady(nodes) {
		if time.Now().After(deadline) {
			k.Fatalf("the suite's 3-node NATS cluster has no JetStream leader with all peers after %v (a busy machine?)", 3*testkit.IOTimeout)
		}
		time.Sleep(20 * time.Millisecond) // polling NATS's own state; nothing of the server under test
	}
	return nodes
}

// clusterReady reports whether one node is the JetStream leader and sees
// the other two as peers.
func clusterReady(nodes []*natsNode) bool {
	for _, n := range nodes {
		if n.srv.JetStreamIsLeader() && len(n.srv.JetStreamClusterPeers()) == len(nodes) {
			return true
		}
	}
	return false
}

// start starts the node (again).
func (n *natsNode) start() {
	n.k.Helper()
	opts := &server.Options{
		ServerName: n.name,
		Host:       "127.0.0.1",
		Port:       n.port,
		JetStream:  true,
		StoreDir:   n.store,
		NoLog:      true,
		NoSigs:     true,
	}
	if n.cluster != 0 {
		opts.Cluster.Name = "suite"
		opts.Cluster.Host, opts.Cluster.Port = "127.0.0.1", n.cluster
		for _, p := range n.routes {
			opts.Routes = append(opts.Routes, server.RoutesFromStr("nats://127.0.0.1:"+strconv.Itoa(p))...)
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		n.k.Fatalf("start the suite's NATS: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(testkit.IOTimeout) {
		srv.Shutdown()
		n.k.Fatalf("the suite's NATS did not start within %v", testkit.IOTimeout)
	}
	n.srv = srv
}

// stop shuts the node down and waits until it is gone. Stopping a stopped
// node does nothing.
func (n *natsNode) stop() {
	if n.srv == nil {
		return
	}
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	n.srv = nil
}

// restart stops the node and starts it again with its store.
func (n *natsNode) restart() {
	n.k.Helper()
	n.stop()
	n.start()
}

// url is the node's client URL.
func (n *natsNode) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// observer is the suite's own connection to NATS, to look at what the
// servers stored and to publish as another server would.
type observer struct {
	k  *testkit.T
	nc *nats.Conn
	js jetstream.JetStream
}

// observe connects the suite to NATS at url (reconnecting for ever).
func observe(k *testkit.T, url string) *observer {
	k.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		k.Fatalf("the suite connects to its NATS: %v", err)
	}
	k.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		k.Fatalf("JetStream: %v", err)
	}
	return &observer{k: k, nc: nc, js: js}
}

// ctx is a context for one call of the observer.
func (o *observer) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), testkit.IOTimeout)
}

// subject is the stream subject of a channel.
func subject(ch uint32) string { return msgSubject + strconv.FormatUint(uint64(ch), 10) }

// publish stores a chat message in channel ch as a server would, retrying
// (with the same message id) while NATS comes back, and returns its
// sequence.
func (o *observer) publish(ch, user uint32, content string) uint64 {
	o.k.Helper()
	data, _ := json.Marshal(storedChat{User: user, Content: content})
	id := fmt.Sprintf("suite-%d-%d", ch, o.k.Rand().Uint64())
	deadline := time.Now().Add(2 * testkit.IOTimeout)
	for {
		ctx, cancel := o.ctx()
		ack, err := o.js.PublishMsg(ctx, &nats.Msg{Subject: subject(ch), Data: data}, jetstream.WithMsgID(id))
		cancel()
		if err == nil {
			return ack.Sequence
		}
		if time.Now().After(deadline) {
			o.k.Fatalf("the suite could not publish to %s: %v", subject(ch), err)
		}
		time.Sleep(50 * time.Millisecond) // NATS is coming back; nothing of the server under test
	}
}

// stored is one message of the stream as the suite reads it.
type stored struct {
	seq     uint64
	msgID   string
	subject string
	body    storedChat
}

// messages returns every chat message of channel ch in the stream, in
// order.
func (o *observer) messages(ch uint32) []stored {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	s, err := o.js.Stream(ctx, streamName)
	if err != nil {
		o.k.Fatalf("the stream %s (the lesson fixes its name): %v", streamName, err)
	}
	var out []stored
	last, err := s.GetLastMsgForSubject(ctx, subject(ch))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		o.k.Fatalf("read %s: %v", subject(ch), err)
	}
	for seq := uint64(1); seq <= last.Sequence; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject(ch)))
		if err != nil {
			o.k.Fatalf("read %s from %d: %v", subject(ch), seq, err)
		}
		var body storedChat
		if err := json.Unmarshal(m.Data, &body); err != nil {
			o.k.Fatalf("message %d of %s is not {\"user\":…,\"content\":…}: %q", m.Sequence, m.Subject, m.Data)
		}
		out = append(out, stored{seq: m.Sequence, msgID: m.Header.Get(jetstream.MsgIDHeader), subject: m.Subject, body: body})
		seq = m.Sequence + 1
	}
	return out
}

// putSession writes a session key as a server that then died would have.
func (o *observer) putSession(user uint32) {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	kv, err := o.js.KeyValue(ctx, sessionsBucket)
	if err != nil {
		o.k.Fatalf("the bucket %s (the lesson fixes its name): %v", sessionsBucket, err)
	}
	if _, err := kv.Put(ctx, "s."+strconv.FormatUint(uint64(user), 10), []byte("a server that died")); err != nil {
		o.k.Fatalf("write a session key: %v", err)
	}
}

// sessionRevision is the revision of user's session key now; 0 if it has
// none.
func (o *observer) sessionRevision(user uint32) uint64 {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	kv, err := o.js.KeyValue(ctx, sessionsBucket)
	if err != nil {
		o.k.Fatalf("the bucket %s (the lesson fixes its name): %v", sessionsBucket, err)
	}
	e, err := kv.Get(ctx, "s."+strconv.FormatUint(uint64(user), 10))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0
	}
	if err != nil {
		o.k.Fatalf("read a session key: %v", err)
	}
	return e.Revision()
}

// consumers is how many consumers the stream has now.
func (o *observer) consumers() int {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	s, err := o.js.Stream(ctx, streamName)
	if err != nil {
		o.k.Fatalf("the stream %s (the lesson fixes its name): %v", streamName, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		o.k.Fatalf("the stream %s's state: %v", streamName, err)
	}
	return info.State.Consumers
}

// purge deletes every message of channel ch, as an operator making room.
func (o *observer) purge(ch uint32) {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	s, err := o.js.Stream(ctx, streamName)
	if err == nil {
		err = s.Purge(ctx, jetstream.WithPurgeSubject(subject(ch)))
	}
	if err != nil {
		o.k.Fatalf("the suite purges %s: %v", subject(ch), err)
	}
}

// deleteStream deletes a stream, as a store wiped.
func (o *observer) deleteStream(name string) {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	if err := o.js.DeleteStream(ctx, name); err != nil {
		o.k.Fatalf("the suite deletes the stream %s: %v", name, err)
	}
}

// deleteBucket deletes a bucket (its stream), as a store that fails.
func (o *observer) deleteBucket(bucket string) {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	if err := o.js.DeleteKeyValue(ctx, bucket); err != nil {
		o.k.Fatalf("the suite deletes the bucket %s: %v", bucket, err)
	}
}

// stepDown asks the leader of stream to hand its place to another node
// (a leader move, as when a node dies), and waits until one has it.
func (o *observer) stepDown(stream string) {
	o.k.Helper()
	ctx, cancel := o.ctx()
	defer cancel()
	resp, err := o.nc.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil)
	if err != nil {
		o.k.Fatalf("the suite moves the leader of %s: %v", stream, err)
	}
	var r struct {
		Success bool `json:"success"`
	}
	if json.Unmarshal(resp.Data, &r) != nil || !r.Success {
		o.k.Fatalf("the suite moves the leader of %s: %s", stream, resp.Data)
	}
	var last error
	for {
		try, cancelTry := context.WithTimeout(ctx, 500*time.Millisecond)
		s, err := o.js.Stream(try, stream)
		if err == nil {
			var info *jetstream.StreamInfo
			if info, err = s.Info(try); err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
				cancelTry()
				return
			}
		}
		cancelTry()
		if err != nil {
			last = err
		}
		if ctx.Err() != nil {
			o.k.Fatalf("the stream %s has no leader %v after a leader move (%v)", stream, testkit.IOTimeout, last)
		}
		time.Sleep(20 * time.Millisecond) // polling NATS's own state; nothing of the server under test
	}
}

// publishMany stores n chat messages in channel ch at once (asynchronous
// publishes, then every acknowledgement awaited).
func (o *observer) publishMany(ch, user uint32, n int, content func(i int) string) {
	o.k.Helper()
	for i := 0; i < n; {
		var acks []jetstream.PubAckFuture
		for ; i < n && len(acks) < 1000; i++ {
			data, _ := json.Marshal(storedChat{User: user, Content: content(i)})
			f, err := o.js.PublishMsgAsync(&nats.Msg{Subject: subject(ch), Data: data})
			if err != nil {
				o.k.Fatalf("the suite publishes to %s: %v", subject(ch), err)
			}
			acks = append(acks, f)
		}
		for _, f := range acks {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				o.k.Fatalf("the suite publishes to %s: %v", subject(ch), err)
			case <-time.After(2 * testkit.IOTimeout):
				o.k.Fatalf("the suite publishes to %s: no acknowledgement in %v", subject(ch), 2*testkit.IOTimeout)
			}
		}
	}
}
