// Command chatscale-server runs the chapter 08 chatcore server: chapter
// 07's protocol and flags, its state in NATS JetStream, so that several of
// them serve one chat.
//
// Alone, as chapter 07's server (it embeds a one-node NATS, with no port,
// its store in sqlite.db.nats):
//
//	go run ./chapters/08/cmd/chatscale-server --port 1338
//
// Three servers, each a node of one embedded 3-node NATS cluster (see the
// lesson for the whole recipe):
//
//	go run ./chapters/08/cmd/chatscale-server --port 1338 --db a.db \
//	    --cluster-node a --cluster 127.0.0.1:6222 --routes 127.0.0.1:6223,127.0.0.1:6224 --replicas 3
//
// Joining an existing NATS instead: --nats nats://host:4222.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	chatscale "serverlab/chapters/08"
	"serverlab/tools/given/lab"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chatscale-server:", err)
		os.Exit(1)
	}
}

// run parses args, connects to NATS (or embeds it), opens the listener and
// serves until a signal.
func run(args []string) error {
	fs := flag.NewFlagSet("chatscale-server", flag.ContinueOnError)
	ip := fs.String("ip", "0.0.0.0", "address to listen on")
	port := fs.Int("port", 1338, "port to listen on")
	db := fs.String("db", "sqlite.db", "names the data: the embedded NATS keeps its store in <db>.nats")
	level := fs.String("log", "info", "log level: debug, info, warn or error")
	natsURL := fs.String("nats", "", "join this NATS (comma-separated nats:// URLs) instead of embedding one")
	node := fs.String("cluster-node", "", "with -cluster: this node's name, unique in the cluster")
	clusterAddr := fs.String("cluster", "", "make the embedded NATS a cluster node that takes routes on this host:port")
	routes := fs.String("routes", "", "with -cluster: the other nodes' route addresses, comma-separated host:port")
	clientAddr := fs.String("nats-listen", "", "with -cluster: also accept NATS clients on this host:port (for servers started with -nats)")
	replicas := fs.Int("replicas", 1, "copies of the stream and buckets the cluster keeps (3 on a 3-node cluster)")
	hashIter := fs.Int("hash-iterations", chatscale.DefaultHashIterations, "PBKDF2 iterations per password hash")
	publishTimeout := fs.Duration("publish-timeout", chatscale.DefaultPublishTimeout, "how long a chat message may wait for the stream's acknowledgement")
	sessionTTL := fs.Duration("session-ttl", chatscale.DefaultSessionTTL, "how long a dead server's logins stay taken")
	maxStream := fs.Int64("max-stream-bytes", chatscale.DefaultMaxStreamBytes, "the budget of every channel's history together: a full stream refuses new messages")
	maxChannel := fs.Int64("max-channel-messages", chatscale.DefaultMaxChannelMessages, "how many messages one channel keeps (its oldest go)")
	var lim chatscale.Config // the timeouts and limits, as chapter 07's flags (docs/chatcore.md, "Limits")
	fs.DurationVar(&lim.LoginTimeout, "login-timeout", chatscale.DefaultLoginTimeout, "how long a connection may stay unauthenticated")
	fs.DurationVar(&lim.Limits.MaxIdle, "max-idle", chatscale.DefaultMaxIdle, "how long any connection may stay silent")
	fs.IntVar(&lim.Limits.MaxConnections, "max-connections", chatscale.DefaultMaxConnections, "open connections; the one past it is told 'Server busy.' and closed")
	fs.IntVar(&lim.Limits.MaxConnsPerAddress, "max-conns-per-address", chatscale.DefaultMaxConnsPerAddr, "open connections from one client address (fewer near -max-connections)")
	fs.IntVar(&lim.Limits.PreAuthBudget, "pre-auth-budget", chatscale.DefaultPreAuthBudget, "bytes of large frames (over 64 KiB) that connections not logged in may be reading at once, together")
	fs.IntVar(&lim.Limits.InputBudget, "input-budget", chatscale.DefaultInputBudget, "bytes of large frames (over 64 KiB) that all connections may be reading at once, together")
	fs.IntVar(&lim.Limits.OutputBudget, "output-budget", chatscale.DefaultOutputBudget, "bytes of frames queued for all clients together; large replies (history) may use half, past it Server busy.")
	fs.IntVar(&lim.Limits.HistoryReads, "history-reads", chatscale.DefaultHistoryReads, "GetChats read from the stream at once; past it Server busy.")
	fs.IntVar(&lim.Limits.MaxPending, "max-pending", chatscale.DefaultMaxPending, "bytes queued for one connection; past it the connection is dropped")
	fs.IntVar(&lim.Limits.MaxChannels, "max-channels", chatscale.DefaultMaxChannels, "channels")
	fs.IntVar(&lim.Limits.PresenceBurst, "presence-burst", chatscale.DefaultPresenceBurst, "presence events (login, logout, join, leave) sent to one connection at once; past its budget it misses them")
	fs.IntVar(&lim.Limits.PresenceRate, "presence-rate", chatscale.DefaultPresenceRate, "presence events per second that refill a connection's budget")
	fs.IntVar(&lim.Limits.ChatBurst, "chat-burst", chatscale.DefaultChatBurst, "chat bytes one user may write at once; past its budget a message is refused")
	fs.IntVar(&lim.Limits.ChatRate, "chat-rate", chatscale.DefaultChatRate, "chat bytes per second that refill a user's budget")
	fs.IntVar(&lim.Limits.MaxChannelsPerUser, "max-channels-per-user", chatscale.DefaultMaxChannelsPerUser, "channels one user may create on this server")
	fs.IntVar(&lim.Limits.MaxChannelsPerAddress, "max-channels-per-address", 0, "channels the users of one client address may create on this server (0: an eighth of -max-channels, at least 8 users' worth)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := logger(*level)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	cfg := lim
	cfg.DBPath, cfg.NATSURL, cfg.Replicas, cfg.HashIterations = *db, *natsURL, *replicas, *hashIter
	cfg.PublishTimeout, cfg.SessionTTL, cfg.Logger = *publishTimeout, *sessionTTL, log
	cfg.MaxStreamBytes, cfg.MaxChannelMessages = *maxStream, *maxChannel
	if *clusterAddr != "" {
		if *natsURL != "" {
			return errors.New("-cluster and -nats exclude each other: a server embeds a node or joins one")
		}
		cfg.Cluster = &chatscale.ClusterConfig{NodeName: *node, Listen: *clusterAddr, ClientListen: *clientAddr}
		if *routes != "" {
			cfg.Cluster.Routes = strings.Split(*routes, ",")
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*ip, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	srv, err := chatscale.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("accepting clients", "addr", ln.Addr())
	return lab.ServeUntilSignal(srv, ln)
}

func logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, errors.New("-log: want debug, info, warn or error")
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
