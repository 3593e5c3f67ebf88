package chatscale

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	nats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
	users    jetstream.KeyValue
	channels jetstream.KeyValue
	sessions jetstream.KeyValue

	// reconnected and resets each get a signal when the connection to
	// NATS comes back: the session keeper's and the consumer's.
	reconnected chan struct{}
	resets      chan struct{}

	mu   sync.Mutex
	subs []*nats.Subscription
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
	l := &natsLink{reconnected: make(chan struct{}, 1), resets: make(chan struct{}, 1)}
	opts := []nats.Option{
		nats.Name("chatscale"),
		nats.MaxReconnects(-1), // NATS coming back must not need a restart of ours
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
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

// setUp makes (or finds) the stream and the buckets.
func (l *natsLink) setUp(ctx context.Context, cfg Config) error {
	ctx, cancel := context.WithTimeout(ctx, setUpTimeout)
	defer cancel()
	js, err := jetstream.New(l.nc)
	if err != nil {
		return err
	}
	l.js = js
	err = retrySetUp(ctx, func(ctx context.Context) (err error) {
		l.stream, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:       streamName,
			Subjects:   []string{msgSubject + "*"},
			Storage:    jetstream.FileStorage,
			Replicas:   cfg.Replicas,
			Duplicates: dedupWindow,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("stream %s: %w", streamName, err)
	}
	bucket := func(name string, ttl time.Duration) (kv jetstream.KeyValue, err error) {
		err = retrySetUp(ctx, func(ctx context.Context) (err error) {
			kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
				Bucket: name, TTL: ttl, Storage: jetstream.FileStorage, Replicas: cfg.Replicas,
			})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("bucket %s: %w", name, err)
		}
		return kv, nil
	}
	if l.users, err = bucket(usersBucket, 0); err != nil {
		return err
	}
	if l.channels, err = bucket(channelsBucket, 0); err != nil {
		return err
	}
	if l.sessions, err = bucket(sessionsBucket, cfg.SessionTTL); err != nil {
		return err
	}
	return nil
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
	body, err := json.Marshal(req)
	if err != nil {
		return entry{}, err
	}
	resp, err := l.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, body)
	if err != nil {
		return entry{}, err
	}
	var r struct {
		Message *struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
			Data    []byte `json:"data"`
			Headers []byte `json:"hdrs"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return entry{}, err
	}
	switch {
	case r.Error != nil && r.Error.Code == 404:
		return entry{}, errNotFound
	case r.Error != nil:
		return entry{}, fmt.Errorf("nats: %s (%d)", r.Error.Description, r.Error.Code)
	case r.Message == nil || !strings.HasPrefix(r.Message.Subject, prefix):
		return entry{}, errNotFound
	case bytes.Contains(r.Message.Headers, []byte("KV-Operation")):
		return entry{}, errNotFound // a delete or purge marker: users and channels have none
	}
	return entry{key: strings.TrimPrefix(r.Message.Subject, prefix), rev: r.Message.Seq, value: r.Message.Data}, nil
}
