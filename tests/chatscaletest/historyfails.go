package chatscaletest

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// A history is read in several NATS requests (the channel's newest
// sequence, counts from a sequence on, a batch of messages), and the suite
// failed them only all at once (NATS stopped, the stream deleted), where
// the first failure ends the read whatever the server does with the later
// ones. These checks fail one kind of request alone, through the proxy, so
// that a failure the server ignores or retries shows.

// failReply and failedReply mark, in frameHook.replies, a direct get the
// proxy answers with an error itself, and the rest of its batch, dropped.
const (
	failReply   = "\x00fail"
	failedReply = "\x00failed"
)

// directReq is the body of a direct get of the stream, as far as the
// checks here look.
type directReq struct {
	Seq      uint64 `json:"seq"`
	Subject  string `json:"next_by_subj"`
	Batch    int    `json:"batch"`
	MaxBytes int    `json:"max_bytes"`
}

// markFailedLocked notes, under p.mu, a direct get of the stream that h's
// failDirect wants failed.
func (p *ackDropper) markFailedLocked(h *frameHook, f frame) {
	if h.failDirect == nil || f.args[0] != "$JS.API.DIRECT.GET."+streamName ||
		!(f.op == "PUB" && len(f.args) == 3 || f.op == "HPUB" && len(f.args) == 4) {
		return
	}
	var req directReq
	if json.Unmarshal(f.body[f.hdrs:], &req) == nil && h.failDirect(req) {
		h.replies[f.args[1]] = failReply
	}
}

// failAnswer is the proxy's answer, under p.mu, to a frame of a direct get
// marked failed: the first becomes an error status, the rest are dropped.
func failAnswer(f frame, h *frameHook) ([]byte, bool) {
	if h.replies[f.args[0]] == failedReply {
		return nil, true
	}
	h.replies[f.args[0]] = failedReply
	hdr := "NATS/1.0 500 the suite's proxy failed this read\r\n\r\n"
	return fmt.Appendf(nil, "HMSG %s %s %d %d\r\n%s\r\n", f.args[0], f.args[1], len(hdr), len(hdr), hdr), true
}

// historyRig is a server behind the proxy, a channel of five messages
// ("message 1" … "message 5") and the client that made it.
func historyRig(k *testkit.T, impl Impl, name string) (*ackDropper, *client, proto.Channel, Config) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	cfg := baseConfig(k, proxy.url())
	srv := serve(k, impl, "H", cfg)
	c := srv.dial(name)
	c.newUser(name)
	ch := c.createChannel(name + "-channel")
	for i := 1; i <= 5; i++ {
		obs.publish(ch.ID, c.user.ID, fmt.Sprintf("message %d", i))
	}
	return proxy, c, ch, cfg
}

// newestTwoOrFailed reports whether got is Storage failed. or the two
// newest messages of historyRig's channel.
func newestTwoOrFailed(got proto.Message, requestID uint64) bool {
	if got == (proto.ErrorResponse{RequestID: requestID, Value: proto.MsgStorageFailed}) {
		return true
	}
	r, ok := got.(proto.GetChatsResponse)
	if !ok {
		return false
	}
	var texts []string
	for _, m := range r.Messages {
		texts = append(texts, m.Content)
	}
	return slices.Equal(texts, []string{"message 4", "message 5"})
}

// historyCountFails checks that a failed count is a failed history: the
// proxy fails the first one-message direct get of the stream (how a server
// counts a channel's messages from a sequence on, to find where its newest
// N start). A server that goes on without that start reads from the
// channel's first message and answers its oldest messages as its newest.
func historyCountFails(k *testkit.T, impl Impl) {
	k.Helper()
	proxy, hal, ch, _ := historyRig(k, impl, "hal")
	failed := false // under the proxy's mutex
	proxy.setHook(&frameHook{failDirect: func(r directReq) bool {
		if r.Batch == 1 && r.MaxBytes == 0 && !failed {
			failed = true
			return true
		}
		return false
	}})
	req := proto.GetChatsRequest{ChannelID: ch.ID, Limit: 2, RequestID: hal.id()}
	got := hal.call(req)
	proxy.setHook(&frameHook{})
	if !newestTwoOrFailed(got, req.RequestID) {
		k.Fatalf("%s: GetChats of the newest 2 of a channel's 5 messages, the first count request (a one-message direct get) "+
			"failed by the suite's proxy\nsent: %s\nwant: 111 with \"message 4\" and \"message 5\", or %s\ngot:  %s\n"+
			"likely cause: the failed count is ignored and the read starts from the channel's first message: a storage "+
			"error is the answer's, not a zero to go on with%s%s", hal.who, show(req), proto.MsgStorageFailed,
			showHistory(got), notImplemented(got), hal.context())
	}
}

// historyReadFails checks that a failed read of the messages is answered
// at once: the proxy fails every batched direct get of the stream that is
// bounded in bytes (how a server reads the newest N once it knows where
// they start). A server that takes the failure for a replica behind the
// leader and tries again answers only when the request timeout ends.
func historyReadFails(k *testkit.T, impl Impl) {
	k.Helper()
	proxy, ida, ch, cfg := historyRig(k, impl, "ida")
	proxy.setHook(&frameHook{failDirect: func(r directReq) bool { return r.MaxBytes > 0 }})
	defer proxy.setHook(&frameHook{})
	req := proto.GetChatsRequest{ChannelID: ch.ID, Limit: 2, RequestID: ida.id()}
	start := time.Now()
	got := ida.call(req)
	took := time.Since(start)
	if !newestTwoOrFailed(got, req.RequestID) || took > cfg.RequestTimeout/2 {
		k.Fatalf("%s: GetChats of the newest 2 of a channel's 5 messages, every read of messages (a batched direct get "+
			"bounded in bytes) failed by the suite's proxy\nsent: %s\nwant: %s (or the 2 messages) under %v\n"+
			"got:  %s after %v\nlikely cause: a failed read is taken for a short one (a replica behind the leader) "+
			"and tried again until the request timeout (%v): an error from NATS is Storage failed. at once%s%s",
			ida.who, show(req), proto.MsgStorageFailed, cfg.RequestTimeout/2, showHistory(got),
			took.Round(time.Millisecond), cfg.RequestTimeout, notImplemented(got), ida.context())
	}
}
