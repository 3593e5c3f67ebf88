// Command chatcore-server runs the chapter 07 chatcore server, with the
// original's flags:
//
//	go run ./solutions/07/cmd/chatcore-server --ip 127.0.0.1 --port 1338 --db sqlite.db --log info
//
// Talk to it with the course's client, go run ./tools/cmd/chatcore-client, or
// with the original's client and load tester. Stop it with Ctrl-C (or
// SIGTERM): it commits what it holds, tells every client, and exits. With
// -tls-cert and -tls-key it speaks TLS only.
package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	chatcore "serverlab/solutions/07"
	"serverlab/tools/given/lab"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chatcore-server:", err)
		os.Exit(1)
	}
}

// run parses args, opens the database and the listener, and serves until a
// signal or an administrator's Shutdown. A port that cannot be bound is an
// error here, at start-up: the original logged "Accepting clients" and
// listened nowhere.
func run(args []string) error {
	fs := flag.NewFlagSet("chatcore-server", flag.ContinueOnError)
	ip := fs.String("ip", "0.0.0.0", "address to listen on")
	port := fs.Int("port", 1338, "port to listen on")
	db := fs.String("db", "sqlite.db", "SQLite database file (created if missing)")
	level := fs.String("log", "info", "log level: debug, info, warn or error")
	admins := fs.String("admins", "", "comma-separated user names that may stop the server with Shutdown (102)")
	certFile := fs.String("tls-cert", "", "TLS certificate (PEM); with -tls-key, serve TLS only")
	keyFile := fs.String("tls-key", "", "TLS private key (PEM)")
	hashTime := fs.Uint("hash-time", uint(chatcore.DefaultHash.Time), "argon2id passes per password hash")
	hashMemory := fs.Uint("hash-memory", uint(chatcore.DefaultHash.MemoryKiB), "argon2id memory per password hash, in KiB")
	var lim chatcore.Limits
	fs.IntVar(&lim.MaxPending, "max-pending", chatcore.DefaultMaxPending, "bytes queued for one client before it is dropped as too slow")
	fs.IntVar(&lim.MaxConnections, "max-connections", chatcore.DefaultMaxConnections, "open connections; the one past it is told 'Server busy.' and closed")
	fs.IntVar(&lim.MaxConnsPerAddress, "max-conns-per-address", chatcore.DefaultMaxConnsPerAddr, "open connections from one client address; the one past it is told 'Too many connections from your address.' and closed")
	fs.IntVar(&lim.PresenceBurst, "presence-burst", chatcore.DefaultPresenceBurst, "presence events (login, logout, join, leave) sent to one connection at once; past its budget it misses them")
	fs.IntVar(&lim.PresenceRate, "presence-rate", chatcore.DefaultPresenceRate, "presence events per second that refill a connection's budget")
	fs.IntVar(&lim.ChatBurst, "chat-burst", chatcore.DefaultChatBurst, "chat bytes one user may write at once; past its budget a message is refused")
	fs.IntVar(&lim.ChatRate, "chat-rate", chatcore.DefaultChatRate, "chat bytes per second that refill a user's budget")
	fs.IntVar(&lim.PreAuthBudget, "pre-auth-budget", chatcore.DefaultPreAuthBudget, "bytes of large frames (over 64 KiB) that connections not logged in may be reading at once, together")
	fs.IntVar(&lim.InputBudget, "input-budget", chatcore.DefaultInputBudget, "bytes of large frames (over 64 KiB) that all connections may be reading at once, together")
	fs.IntVar(&lim.OutputBudget, "output-budget", chatcore.DefaultOutputBudget, "bytes of frames queued for all clients together; large replies (history) may use half, past it Server busy.")
	fs.IntVar(&lim.HistoryReads, "history-reads", chatcore.DefaultHistoryReads, "GetChats read from the store at once; past it Server busy.")
	fs.DurationVar(&lim.MaxIdle, "max-idle", chatcore.DefaultMaxIdle, "how long any connection may stay silent")
	fs.IntVar(&lim.MaxUserName, "max-user-name", chatcore.DefaultMaxUserName, "bytes of a user name")
	fs.IntVar(&lim.MaxChannelName, "max-channel-name", chatcore.DefaultMaxChannelName, "bytes of a channel name")
	fs.IntVar(&lim.MaxMessage, "max-message", chatcore.DefaultMaxMessage, "bytes of a chat message")
	fs.IntVar(&lim.MaxChannels, "max-channels", chatcore.DefaultMaxChannels, "channels of the server")
	fs.IntVar(&lim.MaxChannelsPerUser, "max-channels-per-user", chatcore.DefaultMaxChannelsPerUser, "channels one user may create while the server runs")
	fs.IntVar(&lim.MaxChannelsPerAddress, "max-channels-per-address", 0, "channels the users of one client address may create while the server runs (0: an eighth of -max-channels, at least 8 users' worth)")
	fs.IntVar(&lim.MaxStoreBytes, "max-store-bytes", chatcore.DefaultMaxStoreBytes, "bytes the database may hold; past them a chat message is refused (Message not stored.)")
	fs.IntVar(&lim.MaxUserIDs, "max-user-ids", chatcore.DefaultMaxUserIDs, "ids in one GetUsers")
	fs.DurationVar(&lim.HashWait, "hash-wait", chatcore.DefaultHashWait, "longest the first password hash of an address's line may wait for its turn (round-robin by address); past it the line is answered 'Server busy.'")
	fs.IntVar(&lim.AddressRegistrations, "address-registrations", chatcore.DefaultAddressRegistrations, "users one address may register at once, refilled over -registration-window; past it 'Too many registrations from your address, try again later.'")
	fs.DurationVar(&lim.RegistrationWindow, "registration-window", chatcore.DefaultRegistrationWindow, "the window of -address-registrations")
	fs.IntVar(&lim.MaxLoginFailures, "max-login-failures", chatcore.DefaultMaxLoginFailures, "failed logins that close a connection")
	fs.IntVar(&lim.AddressFailures, "address-failures", chatcore.DefaultAddressFailures, "failed logins per -failure-window from one address before its logins are refused")
	fs.DurationVar(&lim.FailureWindow, "failure-window", chatcore.DefaultFailureWindow, "the window of -address-failures")
	addUser := fs.String("add-user", "", "create this user in --db with the password read from standard input, and exit (how an administrator's account is made)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := logger(*level)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	cfg := chatcore.Config{DBPath: *db, Logger: log, Limits: lim}
	cfg.Hash = chatcore.HashParams{Time: uint32(*hashTime), MemoryKiB: uint32(*hashMemory), Threads: 1}
	if *admins != "" {
		cfg.Admins = strings.Split(*admins, ",")
	}
	if *certFile != "" || *keyFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if *addUser != "" {
		return addUserAndExit(cfg, *addUser, os.Stdin)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(*ip, strconv.Itoa(*port)))
	if err != nil {
		return err
	}
	srv, err := chatcore.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("accepting clients", "addr", ln.Addr(), "db", *db)
	return lab.ServeUntilSignal(srv, ln)
}

// addUserAndExit creates one account from the first line of in.
func addUserAndExit(cfg chatcore.Config, name string, in io.Reader) error {
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return fmt.Errorf("-add-user: read the password from standard input: %w", err)
	}
	password := strings.TrimRight(line, "\r\n")
	if password == "" {
		return errors.New("-add-user: the password is empty")
	}
	srv, err := chatcore.New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := srv.AddUser(name, password); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "chatcore-server: user %q created in %s\n", name, cfg.DBPath)
	return nil
}

func logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, errors.New("-log: want debug, info, warn or error")
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
