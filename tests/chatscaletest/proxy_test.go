package chatscaletest

import (
	"bufio"
	"strings"
	"testing"
	"testing/iotest"
)

// The proxy reads whole frames whatever the reads deliver (here one byte
// at a time), and a payload that holds a control line is payload.
func TestReadFrameWhole(t *testing.T) {
	stream := "INFO {\"server_id\":\"x\", \"max_payload\":1048576}\r\n" +
		"PING\r\n" +
		"MSG _INBOX.a.b 1 19\r\nMSG fake 1 99\r\nPONG\r\n" +
		"HMSG _INBOX.a.c 1 _INBOX.r 30 32\r\nNATS/1.0\r\nNats-Msg-Id: m.1\r\n\r\nhi\r\n" +
		"HPUB chat.msg.7 _INBOX.a.d 30 56\r\nNATS/1.0\r\nnats-msg-id: C.7\r\n\r\n{\"user\":1,\"content\":\"one\"}\r\n" +
		"PUB chat.msg.7 5\r\nhello\r\n"
	r := bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(stream)), 64<<10)
	var raw strings.Builder
	var ops []string
	for {
		f, err := readFrame(r)
		if err != nil {
			break
		}
		ops = append(ops, f.op)
		raw.Write(f.raw)
		if f.op == "HPUB" && msgIDOf(f) != "C.7" {
			t.Errorf("msgIDOf(%q) = %q; want C.7", f.raw, msgIDOf(f))
		}
	}
	if got := strings.Join(ops, " "); got != "INFO PING MSG HMSG HPUB PUB" {
		t.Errorf("ops %s; want INFO PING MSG HMSG HPUB PUB", got)
	}
	if raw.String() != stream {
		t.Errorf("the frames' bytes are not the stream's:\n%q\nwant\n%q", raw.String(), stream)
	}

	for _, bad := range []string{"MSG a 1 x\r\n", "PUB a 3\r\nabcde\r\n", "HPUB a 9 3\r\nabc\r\n"} {
		if _, err := readFrame(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("readFrame(%q): no error", bad)
		}
	}
}

// Armed, the proxy drops the answer to the next publish to the stream,
// once; INFO loses its connect_urls.
func TestAckDropperDropsOnce(t *testing.T) {
	p := &ackDropper{dropped: make(chan pubTry, 1)}
	frameOf := func(s string) frame {
		f, err := readFrame(bufio.NewReader(strings.NewReader(s)))
		if err != nil {
			t.Fatalf("readFrame(%q): %v", s, err)
		}
		return f
	}
	p.fromClient(frameOf("PUB chat.msg.1 _INBOX.a.1 2\r\n{}\r\n")) // before arm
	p.arm()
	p.fromClient(frameOf("PUB chat.events _INBOX.a.2 2\r\n{}\r\n")) // not the stream
	p.fromClient(frameOf("HPUB chat.msg.1 _INBOX.a.3 30 32\r\nNATS/1.0\r\nNats-Msg-Id: C.1\r\n\r\n{}\r\n"))
	p.fromClient(frameOf("HPUB chat.msg.1 _INBOX.a.4 30 32\r\nNATS/1.0\r\nNats-Msg-Id: C.1\r\n\r\n{}\r\n"))
	for _, c := range []struct {
		msg  string
		drop bool
	}{
		{"MSG _INBOX.a.1 1 2\r\n{}\r\n", false},
		{"MSG _INBOX.a.3 1 2\r\n{}\r\n", true},
		{"MSG _INBOX.a.3 1 2\r\n{}\r\n", false}, // once
		{"MSG _INBOX.a.4 1 2\r\n{}\r\n", false},
	} {
		if dropped := p.fromNode(frameOf(c.msg)) == nil; dropped != c.drop {
			t.Errorf("%q dropped: %v; want %v", c.msg, dropped, c.drop)
		}
	}
	if d := <-p.dropped; d.reply != "_INBOX.a.3" || d.msgID != "C.1" {
		t.Errorf("dropped %+v; want the answer to _INBOX.a.3, message id C.1", d)
	}
	if n := len(p.seen()); n != 2 {
		t.Errorf("%d publishes to the stream seen since arm; want 2", n)
	}
	info := p.fromNode(frameOf("INFO {\"port\":4222,\"connect_urls\":[\"10.0.0.2:4222\"]}\r\n"))
	if string(info) != "INFO {\"port\":4222}\r\n" {
		t.Errorf("INFO passed on as %q; want it without connect_urls", info)
	}
}
