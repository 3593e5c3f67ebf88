package hostile

import (
	"fmt"
	"runtime"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// checkHistoryRead: a GetChats costs the server about one frame of
// reading, however much the channel holds. Two channels hold messages of
// 64,000 bytes (MaxMessage 64 KiB): "one-frame" 16 of them, about what one
// 106 can carry, and "twenty-frames" 320 (20 MB). A reader asks 3 times for
// the newest 1,000 of each; both answers hold the newest 16 or so. What the
// server allocates per answer (the Go runtime's TotalAlloc, which counts
// every byte read from the store or from NATS) may be a few times more for
// the long channel — finding where a frame's worth begins costs something —
// but not twenty times: that is a server that reads every message and then
// trims them to a frame. The ratio, not a figure, is the bound: the bytes a
// frame costs differ between chapters, and with -race. (Chapter 08 read the
// whole history from the stream: 20 clients asking again and again took two
// servers to 290–309 MB of RSS and an honest client's echo to 4–10 s, where
// chapter 07's store, which stops at one frame's worth, stayed at 53 MB and
// 572 ms.)
func checkHistoryRead(k *testkit.T, start Start) {
	const (
		size       = 64000
		short      = 16
		long       = 320
		asks       = 3
		mostTimes  = 2.5 // measured (go test): 07 0.9, 08 1.4; reading every message, 07 3.5 and 08 7.1
		maxMessage = 64 << 10
	)
	addr := start(k, Limits{MaxMessage: maxMessage, ChatBurst: 32 << 20}) // 21 MB from one writer
	writer := dial(k, addr, "a writer of large messages")
	writer.login("history-writer")
	fill := func(name string, messages int) uint32 {
		k.Helper()
		ch := writer.createChannel(name)
		writer.join(ch.ID)
		for i := range messages {
			content := fmt.Sprintf("%03d", i) + strings.Repeat("x", size-3)
			if i%16 < 15 && i < messages-1 { // 16 at a time: the echoes queued for the writer stay small
				writer.send(proto.WriteChat{Content: content})
				continue
			}
			writer.say(ch.ID, content)
		}
		return ch.ID
	}
	one, ten := fill("one-frame", short), fill("twenty-frames", long)
	reader := dial(k, addr, "a reader of the history")
	reader.login("history-reader")
	ask := func(ch uint32, messages int) {
		k.Helper()
		m := reader.call(proto.GetChatsRequest{RequestID: reader.id(), ChannelID: ch, Limit: 1000}, "GetChats")
		r, ok := m.(proto.GetChatsResponse)
		if !ok || len(r.Messages) == 0 || len(r.Messages) > 17 ||
			!strings.HasPrefix(r.Messages[len(r.Messages)-1].Content, fmt.Sprintf("%03d", messages-1)) {
			k.Fatalf("%s: GetChats (limit 1,000) of a channel of %d messages of %d bytes\n  want: 106 with the "+
				"newest that fit in one frame (16 or 17 of them), newest last\n   got: %s%s", reader.who,
				messages, size, show(m), reader.context())
		}
	}
	cost := func(ch uint32, messages int) int {
		k.Helper()
		ask(ch, messages) // caches, buffers
		before := totalAlloc()
		for range asks {
			ask(ch, messages)
		}
		return (totalAlloc() - before) / asks
	}
	perOne, perTen := cost(one, short), cost(ten, long)
	k.Logf("GetChats (limit 1,000): the server allocated %.1f MiB per answer for a channel of %d messages of %d "+
		"bytes, %.1f MiB for one of %d: %.1f times as much (at most %.1f)", mib(perOne), short, size, mib(perTen),
		long, float64(perTen)/float64(max(perOne, 1)), mostTimes)
	if float64(perTen) > mostTimes*float64(perOne) {
		k.Fatalf("a GetChats of the newest 1,000 messages sends the ~16 that fit in one frame, whether the channel "+
			"holds %d messages of %d bytes or %d; the server allocated %.1f MiB per answer for the first and %.1f "+
			"MiB for the second, more than %.1f times as much: it reads far more than it sends. Stop reading once "+
			"a frame's worth is read, newest first (chapter 07's SQLiteStore.History; in chapter 08 "+
			"natsLink.readFrom): read whole, 20 clients asking again and again took a server to 300 MB and an "+
			"honest echo to 4–10 s", short, size, long, mib(perOne), mib(perTen), mostTimes)
	}
}

func mib(n int) float64 { return float64(n) / (1 << 20) }

// totalAlloc is the bytes the server's process has allocated so far.
func totalAlloc() int {
	var m runtime.MemStats
	testkit.ReadMemStats(&m)
	return int(m.TotalAlloc)
}
