package chatscaletest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// notFoundReply marks, in frameHook.replies, a request the proxy answers
// "404 Message Not Found" itself.
const notFoundReply = "\x00404"

// channelsBucket is the bucket of channel names (the lesson fixes it).
const channelsBucket = "chat_channels"

// channelExistsFromLeader checks that a channel found to exist (its name's
// key could not be created) is read from the bucket's leader, not by a
// direct get, which any replica may answer: one behind the leader has not
// the key yet and says "not found". The proxy plays that replica — it
// answers every direct get of the channels bucket 404 — in front of one
// server, while the channel was made on another.
func channelExistsFromLeader(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	proxy := startAckDropper(k, n.url())
	first := serve(k, impl, "M", baseConfig(k, n.url()))
	mia := first.dial("mia")
	mia.newUser("mia")
	made := mia.createChannel("made-elsewhere")

	srv := serve(k, impl, "S", baseConfig(k, proxy.url()))
	sid := srv.dial("sid")
	sid.newUser("sid")
	proxy.setHook(&frameHook{notFound: "$JS.API.DIRECT.GET.KV_" + channelsBucket})
	req := proto.CreateChannelRequest{Name: made.Name, RequestID: sid.id()}
	got := sid.call(req)
	if r, ok := got.(proto.CreateChannelResponse); !ok || r.Channel != made {
		k.Fatalf("%s: creating a channel that server M made, on server S, whose direct gets of the channels bucket a replica behind the leader answers (the suite's proxy: 404 Message Not Found)\nsent: %s\nwant: 108 with the existing channel %+v\ngot:  %s\n"+
			"likely cause: the channel's key, found to exist (Create said so), is read with kv.Get — a direct get any replica may answer, and one behind the leader has not the key yet; read it from the leader (the stream's MSG.GET request)%s%s",
			sid.who, show(req), made, show(got), notImplemented(got), sid.context())
	}
}

// staleReply marks, in frameHook.replies, a batched direct get whose
// answer loses the message hideSeq.
const staleReply = "\x00stale"

// isBatch reports whether f asks a direct get for more than one message.
func isBatch(f frame) bool {
	var req struct {
		Batch int `json:"batch"`
	}
	return json.Unmarshal(f.body[f.hdrs:], &req) == nil && req.Batch > 1
}

// staleAnswer is what a replica without the message hideSeq answers for
// one frame of a batched direct get: that message dropped, and the count
// of messages after each earlier one (Nats-Num-Pending) one less. The
// first batch to hide it disarms h: the replica has caught up.
func staleAnswer(f frame, h *frameHook) ([]byte, bool) {
	if h.staleBatch == "" || f.op != "HMSG" {
		return nil, false
	}
	seq, err := strconv.ParseUint(headerOf(f, "Nats-Sequence"), 10, 64)
	hide, _ := strconv.ParseUint(h.hideSeq, 10, 64)
	switch {
	case err != nil || seq > hide:
		return nil, false
	case seq == hide:
		h.staleBatch = ""
		return nil, true
	}
	pending, err := strconv.ParseUint(headerOf(f, "Nats-Num-Pending"), 10, 64)
	if err != nil || pending == 0 {
		return nil, false
	}
	lines := strings.Split(string(f.body[:f.hdrs]), "\r\n")
	for i, l := range lines[1:] {
		if k, _, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Nats-Num-Pending") {
			lines[i+1] = "Nats-Num-Pending: " + strconv.FormatUint(pending-1, 10)
		}
	}
	hdr := strings.Join(lines, "\r\n")
	payload := f.body[f.hdrs:]
	args := append([]string(nil), f.args[:len(f.args)-2]...) // subject sid [reply]
	out := fmt.Appendf(nil, "HMSG %s %d %d\r\n%s", strings.Join(args, " "), len(hdr), len(hdr)+len(payload), hdr)
	return append(append(out, payload...), "\r\n"...), true
}

// headerOf is the header name of an HPUB or HMSG ("" if none).
func headerOf(f frame, name string) string {
	for _, l := range strings.Split(string(f.body[:f.hdrs]), "\r\n")[1:] { // [0] is NATS/1.0
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// historyFromStaleReplica checks that a history is checked against the
// channel's last message: a batched direct get may be answered by a replica
// behind the leader, which has not the newest message yet. The proxy plays
// that replica once — the first batched read of the stream loses the
// channel's newest message, and each earlier one's count of the messages
// after it is one less, as that replica would count — and GetChats must
// still answer the newest N
// (the last sequence, asked of the leader, says the batch is short: read
// again).
func historyFromStaleReplica(k *testkit.T, impl Impl) {
	k.Helper()
	n := startNATS(k)
	obs := observe(k, n.url())
	proxy := startAckDropper(k, n.url())
	srv := serve(k, impl, "Z", baseConfig(k, proxy.url()))
	zoe := srv.dial("zoe")
	zoe.newUser("zoe")
	const ch = 61
	var all []proto.ChatMessage
	for i := range 12 {
		content := fmt.Sprintf("replicated %d", i)
		seq := obs.publish(ch, zoe.user.ID, content)
		all = append(all, proto.ChatMessage{Content: content, ID: uint32(seq), UserID: zoe.user.ID})
	}
	newest := all[len(all)-1]
	proxy.setHook(&frameHook{staleBatch: "$JS.API.DIRECT.GET." + streamName, hideSeq: strconv.FormatUint(uint64(newest.ID), 10)})
	want := all[len(all)-5:]
	req := proto.GetChatsRequest{ChannelID: ch, Limit: 5, RequestID: zoe.id()}
	got := zoe.call(req)
	if r, ok := got.(proto.GetChatsResponse); !ok || !slices.Equal(r.Messages, want) {
		k.Fatalf("%s: GetChats(channel %d, limit 5), its first batched read answered by a replica behind the leader (the suite's proxy took message %d, the newest, out of it)\nsent: %s\nwant: 106 with %s\ngot:  %s\n"+
			"likely cause: the history takes whatever the batch holds: check that it reaches the channel's last sequence (asked of the leader) and read again if not — a direct get may be answered by any replica%s%s",
			zoe.who, ch, newest.ID, show(req), chats(want), showHistory(got), notImplemented(got), zoe.context())
	}
}
