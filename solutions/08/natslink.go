package chatscale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	nats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"serverlab/tools/given/filelock"
)

// What the servers share in NATS.
const (
	streamName     = "CHAT"
	msgSubject     = "chat.msg."   // + channel id: one subject per channel
	eventSubject   = "chat.events" // every event, best effort
	usersBucket    = "chat_users"
	channelsBucket = "chat_channels"
	sessionsBucket = "chat_sessions"
	// dedupWindow is how long the stream remembers a message id: a retry
	// within it is stored once.
	dedupWindow = 2 * time.Minute
)

// natsLink is a server's connection to NATS: the JetStream context, the
// stream, the buckets, and the embedded NATS server if there is one.
type natsLink struct {
	embedded *server.Server // nil with Config.NATSURL
	nc       *nats.Conn
	js       jetstream.JetStream
	stream   jetstream.Stream
	created  time.Time // when the stream was made; only the consumer's goroutine changes it (see streamRemade)
	users    jetstream.KeyValue
	channels jetstream.KeyValue
	sessions jetstream.KeyValue

	// reconnected and resets each get a signal when the connection to
	// NATS comes back: the session keeper's and the consumer's.
	reconnected chan struct{}
	resets      chan struct{}
	// rebinds gets a signal when the stream or a bucket may be gone (NATS
	// came back, maybe on an empty store; a request found one missing):
	// keepBound makes them again (see remake).
	rebinds chan struct{}
	cfg     Config // what remake makes the stream and buckets with

	mu   sync.Mutex
	subs []*nats.Subscription

	// usersMade is when the users bucket this server knows was made: its
	// identity (see checkUsers). Guarded by usersMu.
	usersMu   sync.Mutex
	usersMade time.Time
}

// signal sends on ch without waiting: one pending signal is enough.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// openNATS connects as cfg says and makes the stream and buckets.
func openNATS(ctx context.Context, cfg Config, log *slog.Logger) (*natsLink, error) {
	l := &natsLink{reconnected: make(chan struct{}, 1), resets: make(chan struct{}, 1), rebinds: make(chan struct{}, 1)}
	opts := []nats.Option{
		nats.Name("chatscale"),
		nats.MaxReconnects(-1), // NATS coming back must not need a restart of ours
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		// A link that stalls (a partition: no error, no answer) is noticed
		// by pings: after MaxPingsOutstanding unanswered ones, 3 s at most,
		// the connection is taken for dead and made again. nats.go's
		// default, two minutes and two pings, left a cut-off server deaf
		// for minutes while its clients were told nothing.
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOutstanding),
		nats.Timeout(dialTimeout),
		// A publish while NATS is away fails at once instead of waiting in
		// a buffer to go out later: a message its sender was told is not
		// stored must not turn up after all.
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("NATS reconnected", "url", nc.ConnectedUrl())
			signal(l.reconnected)
			signal(l.resets)
			signal(l.rebinds)
		}),
	}
	url := cfg.NATSURL
	if url == "" {
		ns, err := startEmbedded(cfg, log)
		if err != nil {
			return nil, err
		}
		l.embedded = ns
		opts = append(opts, nats.InProcessServer(ns))
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		l.close()
		return nil, fmt.Errorf("connect to NATS: %w", err)
	}
	l.nc = nc
	if err := l.setUp(ctx, cfg); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// How a stalled link to NATS is noticed (see openNATS).
const (
	pingInterval        = time.Second
	maxPingsOutstanding = 2
	dialTimeout         = 2 * time.Second
)

// The storage budgets. JetStream reserves a stream's MaxBytes out of the
// store when the stream is made, so the chat messages can never take the
// room the buckets need: with the stream full, users still register, log
// in and create channels. The stream discards nothing to make room (a
// full stream refuses a new message: Message not stored.) except within
// one channel, which keeps its newest MaxChannelMessages; it takes
// messages again as soon as room is made (an operator purges a channel),
// without a restart.
const (
	usersBytes    = 64 << 20 // about 500,000 users
	channelsBytes = 16 << 20 // the channel count is capped far below that
	sessionsBytes = 16 << 20 // one key per user logged in, and its delete mark
)

// setUp makes (or finds) the stream and the buckets, and keeps their
// handles. The handles name the stream and the buckets: once remake has
// made them again after a wipe, the same handles reach the new ones.
func (l *natsLink) setUp(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, setUpTimeout)
	defer cancel()
	js, err := jetstream.New(l.nc)
	if err != nil {
		return err
	}
	l.js, l.cfg = js, cfg
	err = retrySetUp(ctx, func(ctx context.Context) (err error) {
		l.stream, err = js.CreateOrUpdateStream(ctx, l.streamConfig())
		return err
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", streamName, err)
	}
	l.created = l.stream.CachedInfo().Created
	kvs := []*jetstream.KeyValue{&l.users, &l.channels, &l.sessions}
	for i, kc := range l.bucketConfigs() {
		err = retrySetUp(ctx, func(ctx context.Context) (err error) {
			*kvs[i], err = js.CreateOrUpdateKeyValue(ctx, kc)
			return err
		})
		if err != nil {
			return fmt.Errorf("bucket %s: %w", kc.Bucket, err)
		}
	}
	return retrySetUp(ctx, func(ctx context.Context) error {
		return l.checkUsers(ctx, func() {}) // the bucket this server starts with
	})
}

// checkUsers reads when the users bucket was made and, if that is not the
// bucket this server knew, takes the new one as known and calls usersGone:
// every account of the old one is gone (NATS restarted on an empty store,
// or an operator made the bucket again), and with them every session of
// this server, whose user ids the new bucket hands to new users. It is
// called after every remake and before every refresh of the sessions, so
// that every server notices, not only the one that made the bucket again:
// with that test alone, two servers on one NATS wiped under them ended
// the sessions of one, and the other's old sessions went on speaking under
// the names of the users registered next (2 runs in 2).
func (l *natsLink) checkUsers(ctx context.Context, usersGone func()) error {
	st, err := l.js.Stream(ctx, "KV_"+usersBucket)
	if err != nil {
		return err
	}
	made := st.CachedInfo().Created
	// usersMu is held through usersGone: a caller that finds the new
	// bucket already known waits until the old sessions are ended, so
	// that a login checked here is never ended with them. Released
	// before, a login on the new bucket slipped in between the remake's
	// check and the end of the old sessions, and was ended too (8.1's
	// store-wiped under load). Only a later bucket is a new one: a read
	// that raced the remake must not take the old bucket back.
	l.usersMu.Lock()
	defer l.usersMu.Unlock()
	known := l.usersMade
	if !made.After(known) {
		return nil
	}
	l.usersMade = made
	if !known.IsZero() {
		usersGone()
	}
	return nil
}

// streamConfig is the stream's configuration.
func (l *natsLink) streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:       streamName,
		Subjects:   []string{msgSubject + "*"},
		Storage:    jetstream.FileStorage,
		Replicas:   l.cfg.Replicas,
		Duplicates: dedupWindow,
		// The budget of every channel's history together, and of each one
		// (see usersBytes).
		MaxBytes:          l.cfg.MaxStreamBytes,
		MaxMsgsPerSubject: l.cfg.MaxChannelMessages,
		Discard:           jetstream.DiscardNew,
		// Any replica answers a read by number (history.go): no consumer
		// is made to read history.
		AllowDirect: true,
	}
}

// bucketConfigs are the buckets' configurations: users, channels,
// sessions, in that order.
func (l *natsLink) bucketConfigs() []jetstream.KeyValueConfig {
	kv := func(name string, ttl time.Duration, maxBytes int64) jetstream.KeyValueConfig {
		return jetstream.KeyValueConfig{Bucket: name, TTL: ttl, MaxBytes: maxBytes, Storage: jetstream.FileStorage, Replicas: l.cfg.Replicas}
	}
	return []jetstream.KeyValueConfig{
		kv(usersBucket, 0, usersBytes),
		kv(channelsBucket, 0, channelsBytes),
		kv(sessionsBucket, l.cfg.SessionTTL, sessionsBytes),
	}
}

// remake makes again, within setUpTimeout, the stream and the buckets that
// NATS says do not exist, in setUp's order, and leaves those that exist
// alone (an update of a stream with consumers makes NATS start them
// again). It is how a server comes back from a NATS that restarted on an
// empty store: without it every write failed until the server was
// restarted. Then it compares the users bucket with the one this server
// knew (checkUsers), whichever server made it again, and calls usersGone
// if it is a new one.
func (l *natsLink) remake(ctx context.Context, usersGone func()) error {
	ctx, cancel := context.WithTimeout(ctx, setUpTimeout)
	defer cancel()
	missing := func(name string) (bool, error) {
		_, err := l.js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return true, nil
		}
		return false, err
	}
	made := func(err error) error {
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) || errors.Is(err, jetstream.ErrBucketExists) {
			return nil // another server made it first
		}
		return err
	}
	gone, err := missing(streamName)
	if err != nil {
		return err
	}
	if gone {
		if _, err := l.js.CreateStream(ctx, l.streamConfig()); made(err) != nil {
			return fmt.Errorf("stream %s: %w", streamName, err)
		}
	}
	for _, kc := range l.bucketConfigs() {
		gone, err := missing("KV_" + kc.Bucket)
		if err != nil {
			return err
		}
		if !gone {
			continue
		}
		if _, err = l.js.CreateKeyValue(ctx, kc); made(err) != nil {
			return fmt.Errorf("bucket %s: %w", kc.Bucket, err)
		}
	}
	return l.checkUsers(ctx, usersGone)
}

// errStoreMissing is a stream or bucket that NATS says does not exist: a
// storage failure (the client is told Storage failed.), never a domain
// answer. Read as "no such message", it told a user logged in a moment
// before that no such user exists, and GetChats that a channel was empty.
var errStoreMissing = errors.New("chatscale: a stream or bucket is missing")

// missing is a request's way of saying that the stream or a bucket may be
// gone: keepBound makes them again.
func (l *natsLink) missing(err error) {
	if errors.Is(err, errStoreMissing) || errors.Is(err, jetstream.ErrStreamNotFound) ||
		errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) {
		signal(l.rebinds)
	}
}

// setUpTry bounds one try of a set-up call: a request sent while a new
// cluster has no leader yet gets no answer, and is sent again.
const setUpTry = 2 * time.Second

// retrySetUp calls f, each time with setUpTry, until it succeeds, fails
// with an answer, or ctx ends.
func retrySetUp(ctx context.Context, f func(context.Context) error) error {
	for {
		try, cancel := context.WithTimeout(ctx, setUpTry)
		err := f(try)
		cancel()
		if err == nil || !natsDown(err) && !errors.Is(err, jetstream.ErrJetStreamNotEnabled) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(retryWait):
		}
	}
}

// setUpTimeout bounds making the stream and buckets: a cluster that has
// just started may need seconds to elect its leader.
const setUpTimeout = 30 * time.Second

// lastSeq is the stream's last sequence number.
func (l *natsLink) lastSeq(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, setUpTimeout)
	defer cancel()
	info, err := l.stream.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// subscribe subscribes to a plain subject, into a channel that one of the
// server's own goroutines reads (so no NATS goroutine runs server code).
func (l *natsLink) subscribe(subject string, ch chan *nats.Msg) error {
	sub, err := l.nc.ChanSubscribe(subject, ch)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.subs = append(l.subs, sub)
	l.mu.Unlock()
	return nil
}

// stopSubscriptions ends the plain subscriptions.
func (l *natsLink) stopSubscriptions() {
	l.mu.Lock()
	subs := l.subs
	l.subs = nil
	l.mu.Unlock()
	for _, sub := range subs {
		sub.Unsubscribe()
	}
}

// close closes the connection and shuts the embedded NATS down.
func (l *natsLink) close() {
	if l.nc != nil {
		l.nc.Close()
	}
	if l.embedded != nil {
		l.embedded.Shutdown()
		l.embedded.WaitForShutdown()
	}
}

// startEmbedded starts this process's NATS node: alone, with no port
// (DontListen: only the in-process connection reaches it), or as a node
// of cfg.Cluster.
func startEmbedded(cfg Config, log *slog.Logger) (*server.Server, error) {
	opts := &server.Options{
		ServerName: "chatscale",
		JetStream:  true,
		StoreDir:   cfg.DBPath + ".nats",
		DontListen: true,
		NoSigs:     true,
	}
	if cl := cfg.Cluster; cl != nil {
		if err := clusterOptions(opts, cl); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	ns.SetLoggerV2(natsLog{log.With("nats", opts.ServerName)}, log.Enabled(context.Background(), slog.LevelDebug), false, false)
	ns.Start()
	if !ns.ReadyForConnections(setUpTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, errors.New("embedded NATS: not ready in time")
	}
	log.Info("embedded NATS started", "store", opts.StoreDir, "cluster", cfg.Cluster != nil)
	return ns, nil
}

// clusterOptions makes opts a node of cl.
func clusterOptions(opts *server.Options, cl *ClusterConfig) error {
	host, port, err := hostPort(cl.Listen)
	if err != nil {
		return fmt.Errorf("cluster listen address: %w", err)
	}
	opts.ServerName = cl.NodeName
	opts.Cluster.Name = cl.Name
	if opts.Cluster.Name == "" {
		opts.Cluster.Name = "chat"
	}
	opts.Cluster.Host, opts.Cluster.Port = host, port
	for _, r := range cl.Routes {
		if _, _, err := hostPort(r); err != nil {
			return fmt.Errorf("route %q: %w", r, err)
		}
		opts.Routes = append(opts.Routes, server.RoutesFromStr("nats://"+r)...)
	}
	// A node starts its routes only once its client port listens: a
	// cluster node has one, on loopback and a port of the kernel's choice
	// unless ClientListen names one.
	opts.DontListen = false
	opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	if cl.ClientListen != "" {
		if opts.Host, opts.Port, err = hostPort(cl.ClientListen); err != nil {
			return fmt.Errorf("client listen address: %w", err)
		}
	}
	return nil
}

// hostPort splits "host:port".
func hostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	return host, port, err
}

// natsLog hands the embedded NATS's log to the server's.
type natsLog struct{ log *slog.Logger }

func (l natsLog) Noticef(format string, v ...any) { l.log.Info(fmt.Sprintf(format, v...)) }
func (l natsLog) Warnf(format string, v ...any)   { l.log.Warn(fmt.Sprintf(format, v...)) }
func (l natsLog) Errorf(format string, v ...any)  { l.log.Warn(fmt.Sprintf(format, v...)) } // a route that fails, and retries
func (l natsLog) Fatalf(format string, v ...any)  { l.log.Error(fmt.Sprintf(format, v...)) }
func (l natsLog) Debugf(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l natsLog) Tracef(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }

// entry is a bucket's key as its stream's leader has it.
type entry struct {
	key   string
	rev   uint64 // the revision that wrote it: the message's sequence
	value []byte
}

// leaderEntry reads a bucket's key (last, the latest revision of the key)
// or a revision of the bucket (rev) from the leader of the bucket's stream.
// A bucket's own Get may be answered by any replica (direct get), and one
// that has not yet heard of a key created a moment ago says it does not
// exist: a user registered on this server could not log in on it. The
// leader has every write it acknowledged.
func (l *natsLink) leaderEntry(ctx context.Context, bucket, key string, rev uint64) (entry, error) {
	prefix := "$KV." + bucket + "."
	req := map[string]any{"seq": rev}
	if key != "" {
		req = map[string]any{"last_by_subj": prefix + key}
	}
	m, err := l.leaderGet(ctx, "KV_"+bucket, req)
	switch {
	case err != nil:
		return entry{}, err
	case !strings.HasPrefix(m.Subject, prefix):
		return entry{}, errNotFound
	case bytes.Contains(m.Headers, []byte("KV-Operation")):
		return entry{}, errNotFound // a delete or purge marker: users and channels have none
	}
	return entry{key: strings.TrimPrefix(m.Subject, prefix), rev: m.Seq, value: m.Data}, nil
}

// leaderMsg is a message of a stream as its leader answers a get.
type leaderMsg struct {
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
	Data    []byte `json:"data"`
	Headers []byte `json:"hdrs"`
}

// leaderGet asks the leader of stream for one message (req as the
// JetStream API's message get takes it); errNotFound if there is none.
func (l *natsLink) leaderGet(ctx context.Context, stream string, req map[string]any) (leaderMsg, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return leaderMsg{}, err
	}
	resp, err := l.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, body)
	if err != nil {
		return leaderMsg{}, err
	}
	var r struct {
		Message *leaderMsg `json:"message"`
		Error   *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return leaderMsg{}, err
	}
	switch {
	case r.Error != nil && r.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return leaderMsg{}, errNotFound
	case r.Error != nil && r.Error.Code == 404: // the stream itself (JSErrCodeStreamNotFound)
		signal(l.rebinds)
		return leaderMsg{}, fmt.Errorf("%w: %s (%d)", errStoreMissing, r.Error.Description, r.Error.ErrCode)
	case r.Error != nil:
		return leaderMsg{}, fmt.Errorf("nats: %s (%d)", r.Error.Description, r.Error.Code)
	case r.Message == nil:
		return leaderMsg{}, errNotFound
	}
	return *r.Message, nil
}

// lastOf is the sequence of the last message on subject in the stream, as
// its leader has it (so a message acknowledged a moment ago is there); 0
// if the subject has none.
func (l *natsLink) lastOf(ctx context.Context, subject string) (uint64, error) {
	m, err := l.leaderGet(ctx, streamName, map[string]any{"last_by_subj": subject})
	if errors.Is(err, errNotFound) {
		return 0, nil
	}
	return m.Seq, err
}

// storedMsg is one message of the stream read by number.
type storedMsg struct {
	seq  uint64
	data []byte
}

// countFrom is how many messages on subject the stream holds at sequence
// seq and after: the stream keeps a count per subject, so this costs one
// request however long the channel is.
func (l *natsLink) countFrom(ctx context.Context, subject string, seq uint64) (uint64, error) {
	msgs, pending, err := l.directBatch(ctx, subject, seq, 1, 0)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	return pending + 1, nil
}

// readFrom reads at most n messages on subject from sequence seq on, in
// the stream's order, with no consumer — but not much more than one reply
// frame of them: when the n hold more than replyRoom bytes, it returns only
// the newest of them, those whose bytes just pass replyRoom (the caller's
// fitFrame trims the rest), and reads little more than that from the
// stream. Read whole, 1000 messages of 16 KiB were 16 MB pulled from NATS
// for each GetChats that could send 1 MiB: 20 clients asking again and
// again took two servers to 300 MB and an honest echo to 4–10 s. Chapter
// 07's store stops the same way.
//
// The newest message on subject says how many make a frame, if they are
// all its size. When n are fewer, one request reads them, with the stream
// told to stop at replyRoom bytes (max_bytes). Otherwise, or if that
// request stopped early, the newest are read backwards from the n-th, in
// chunks of that many (readNewest).
func (l *natsLink) readFrom(ctx context.Context, subject string, seq uint64, n int) ([]storedMsg, error) {
	newest, err := l.leaderGet(ctx, streamName, map[string]any{"last_by_subj": subject})
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	chunk := replyRoom/(len(newest.Data)+1) + 1  // enough to pass replyRoom, if all are its size
	total, err := l.countFrom(ctx, subject, seq) // on subject from seq on
	if err != nil || total == 0 {
		return nil, err
	}
	if chunk >= n || total <= uint64(chunk) {
		msgs, pending, err := l.directBatch(ctx, subject, seq, n, replyRoom)
		if err != nil || len(msgs) == 0 || uint64(len(msgs)) >= min(uint64(n), pending+1) {
			return msgs, err // all of them (the last may pass replyRoom: fitFrame trims)
		}
		chunk = max(1, len(msgs)) // as many as filled a frame at the start
	}
	// The n hold more than a frame. Their end: the newest on subject if
	// they reach it, else the n-th from seq.
	end := newest.Seq
	if total > uint64(n) {
		if end, err = l.startOf(ctx, subject, seq, end, total-uint64(n)+1); err != nil {
			return nil, err
		}
	}
	return l.readNewest(ctx, subject, seq, end, chunk)
}

// readNewest reads the messages on subject in [first, last] backwards,
// newest chunk first, until their bytes pass replyRoom, and returns them
// oldest first. A chunk is read with max_bytes set to the room left: one
// that stops early read only the oldest part of its chunk, which is
// dropped, and the chunk is halved. chunk is how many to try first (as
// many as filled a frame at the start).
func (l *natsLink) readNewest(ctx context.Context, subject string, first, last uint64, chunk int) ([]storedMsg, error) {
	var newest [][]storedMsg
	size := 0
	for last >= first && size <= replyRoom {
		after, err := l.countFrom(ctx, subject, last+1) // those past the range: newer
		if err != nil {
			return nil, err
		}
		from, err := l.startOf(ctx, subject, first, last, after+uint64(chunk))
		if err != nil {
			return nil, err
		}
		got, pending, err := l.directBatch(ctx, subject, from, chunk, replyRoom-size+1)
		if err != nil {
			return nil, err
		}
		reached := len(got) == chunk || uint64(len(got)) >= pending+1
		if n := len(got); n > 0 && got[n-1].seq >= last {
			reached = true
		}
		if !reached && chunk > 1 { // stopped at max_bytes short of last
			chunk /= 2
			continue
		}
		var part []storedMsg
		for _, m := range got {
			if m.seq <= last {
				part = append(part, m)
			}
		}
		for i := len(part) - 1; i >= 0 && size <= replyRoom; i-- {
			size += len(part[i].data) + 1
			if size > replyRoom {
				part = part[i:] // the oldest kept passes the frame: fitFrame drops it
			}
		}
		newest = append(newest, part)
		if from <= first {
			break
		}
		last = from - 1
	}
	var msgs []storedMsg
	for i := len(newest) - 1; i >= 0; i-- {
		msgs = append(msgs, newest[i]...)
	}
	return msgs, nil
}

// startOf is the largest sequence in [first, last] from which subject
// holds at least want messages (to its end), found by halving; first if
// there is none. A count made a moment later may include messages appended
// meanwhile, past last: the sequence found is then later, never earlier,
// and the range from it to last holds at most what was asked for.
func (l *natsLink) startOf(ctx context.Context, subject string, first, last, want uint64) (uint64, error) {
	lo, hi := first, last+1 // countFrom(lo) ≥ want or lo is first; countFrom(hi) < want
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		n, err := l.countFrom(ctx, subject, mid)
		if err != nil {
			return 0, err
		}
		if n >= want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// directBatch asks any replica of the stream for at most n messages on
// subject from sequence seq on (a batched direct get), and for no more once
// they pass maxBytes (0: the NATS server's own bound, 64 MiB by default);
// pending is how many more there were after the first. The replies come to
// an inbox of their own, the last one an end-of-batch mark.
func (l *natsLink) directBatch(ctx context.Context, subject string, seq uint64, n, maxBytes int) (msgs []storedMsg, pending uint64, err error) {
	req := map[string]any{"seq": seq, "next_by_subj": subject, "batch": n}
	if maxBytes > 0 {
		req["max_bytes"] = maxBytes
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, 0, err
	}
	inbox := l.nc.NewInbox()
	sub, err := l.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, 0, err
	}
	defer sub.Unsubscribe()
	if err := l.nc.PublishRequest("$JS.API.DIRECT.GET."+streamName, inbox, body); err != nil {
		return nil, 0, err
	}
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return nil, 0, err
		}
		switch status := m.Header.Get("Status"); status {
		case "":
		case "204", "404": // the end of the batch; none at all
			return msgs, pending, nil
		case "503":
			return nil, 0, nats.ErrNoResponders
		default:
			return nil, 0, fmt.Errorf("nats: direct get: %s %s", status, m.Header.Get("Description"))
		}
		s, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("nats: direct get: sequence %q", m.Header.Get(jetstream.SequenceHeader))
		}
		if len(msgs) == 0 {
			pending, _ = strconv.ParseUint(m.Header.Get("Nats-Num-Pending"), 10, 64)
		}
		msgs = append(msgs, storedMsg{seq: s, data: m.Data})
	}
}

// storeLock is a server's hold on its DBPath: the file DBPath + ".lock",
// locked for as long as the server runs (the kernel drops the lock when the
// process dies, kill -9 too). It holds the server's owner id, the value of
// its session keys: a server that starts again finds the keys its previous
// run left and clears them (clearOldSessions), so its users log in again at
// once. Two servers on one DBPath would share the embedded store and the
// owner id: the second is refused.
type storeLock struct {
	f     *os.File
	owner string
}

// lockStore locks path + ".lock" and reads (or makes) the owner id in it.
func lockStore(path string) (*storeLock, error) {
	f, err := filelock.Open(path + ".lock")
	if errors.Is(err, filelock.ErrInUse) {
		return nil, fmt.Errorf("the store %s is in use by another server (%s.lock)", path, path)
	}
	if err != nil {
		return nil, fmt.Errorf("lock the store: %w", err)
	}
	b := make([]byte, 64)
	n, _ := f.ReadAt(b, 0)
	owner := strings.TrimSpace(string(b[:n]))
	if owner == "" {
		owner = nuid.Next()
		if _, err := f.WriteAt([]byte(owner+"\n"), 0); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock the store: %w", err)
		}
	}
	return &storeLock{f: f, owner: owner}, nil
}

// release unlocks the store (closing the file drops the lock).
func (l *storeLock) release() {
	if l != nil {
		l.f.Close()
	}
}
