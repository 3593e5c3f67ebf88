package chatscale

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Why a lookup or a create did not go through, besides NATS failing.
var (
	errExists   = errors.New("chatscale: name exists")
	errNotFound = errors.New("chatscale: not found")
)

// Keys in the buckets. A name may hold anything printable, and a key only
// letters, digits and -/_=.: so names are encoded (base64url).
func userKey(name string) string    { return "u." + base64.RawURLEncoding.EncodeToString([]byte(name)) }
func channelKey(name string) string { return "c." + base64.RawURLEncoding.EncodeToString([]byte(name)) }
func sessionKey(id uint32) string   { return "s." + strconv.FormatUint(uint64(id), 10) }

// nameOfKey decodes the name of a user or channel key.
func nameOfKey(key string) (string, error) {
	_, enc, ok := strings.Cut(key, ".")
	if !ok {
		return "", errNotFound
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	return string(b), err
}

// createUserKey stores a new user in the users bucket and returns its id:
// the revision at which its key was created.
func (s *Server) createUserKey(ctx context.Context, name, hash string) (uint32, error) {
	rev, err := s.nats.users.Create(ctx, userKey(name), []byte(hash))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, errExists
	}
	if err != nil {
		return 0, err
	}
	return uint32(rev), nil
}

// createChannelKey stores a new channel in the channels bucket, or finds
// the one of that name; its id is the revision at which its key was
// created.
func (s *Server) createChannelKey(ctx context.Context, name string) (id uint32, created bool, err error) {
	rev, err := s.nats.channels.Create(ctx, channelKey(name), []byte(name))
	if err == nil {
		return uint32(rev), true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return 0, false, err
	}
	e, err := s.nats.leaderEntry(ctx, channelsBucket, channelKey(name), 0)
	if err != nil {
		return 0, false, err
	}
	return uint32(e.rev), false, nil
}

// claimSession creates the user's session key, which says which server
// the user is logged in on (this one's owner id), and returns the key's
// revision: this server's lease, which its refreshes and its release
// name. It returns 0 if the key exists (the user is logged in somewhere,
// maybe here).
func (s *Server) claimSession(ctx context.Context, id uint32) (uint64, error) {
	rev, err := s.nats.sessions.Create(ctx, sessionKey(id), []byte(s.store.owner))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, nil
	}
	return rev, err
}

// nameAt returns the name whose key the bucket's revision rev created.
func (s *Server) nameAt(ctx context.Context, bucket string, rev uint32) (string, error) {
	if rev == 0 {
		return "", errNotFound
	}
	e, err := s.nats.leaderEntry(ctx, bucket, "", uint64(rev))
	if err != nil {
		return "", err
	}
	return nameOfKey(e.key)
}
