package chatscaletest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"serverlab/tests/testkit"
)

// ackDropper is a TCP proxy between one chat server and a NATS node: the
// suite's way to lose an acknowledgement on purpose. A publish whose answer
// never comes — stored by the stream, its acknowledgement lost on the way
// back — is what the message id is for (exercise 8.1), and nothing outside
// the connection can make it happen: stopping NATS loses the publish too.
//
// It forwards both directions frame by frame, unchanged, reading the NATS
// client protocol as far as it must to find where each frame ends: a
// control line, and for PUB, HPUB, MSG and HMSG the payload of the size the
// line's last field gives, then CRLF. Armed, it takes the next PUB or HPUB
// on a stream subject (chat.msg.*) that has a reply subject as its target,
// and swallows the first MSG or HMSG the server sends to that reply: the
// stream stored the message, and its sender never hears so.
//
// The one change it makes is to INFO: the node's connect_urls (other
// nodes of a cluster) are taken out, so that the client never learns a
// way around the proxy. The suite runs it in front of one node, which
// advertises none.
type ackDropper struct {
	k    *testkit.T
	ln   net.Listener
	node string // host:port of the NATS node
	wg   sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	conns   []net.Conn
	armed   bool        // the next publish to the stream is the target
	other   string      // armFor's subject prefix: its next publish is the target
	tries   []pubTry    // the publishes to the stream seen since arm
	target  string      // the reply subject whose answer is dropped; "" none
	dropped chan pubTry // gets the target once its answer was dropped

	// A partition, as the server sees it: the links in stalled forward
	// nothing more, in either direction, and stay open (no error, no
	// answer: only the client's pings can tell); with cut, a new link is
	// closed as soon as it is accepted.
	stalled map[net.Conn]bool
	cut     bool
	// chats counts the stream's chat messages the node sent to the client
	// (a consumer's deliveries and direct gets alike).
	chats int
	// hook, if a check sets one (refreshall.go), sees every frame first.
	hook *frameHook
}

// pubTry is one publish to the stream the proxy saw.
type pubTry struct {
	subject, reply, msgID string
	body                  storedChat // as far as it decodes
}

// startAckDropper listens on 127.0.0.1 for clients of the node at natsURL
// ("nats://host:port"); every connection is closed, and every goroutine
// ended, at the check's cleanup (or when its watchdog fires).
func startAckDropper(k *testkit.T, natsURL string) *ackDropper {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("the suite's proxy in front of NATS: %v", err)
	}
	p := &ackDropper{k: k, ln: ln, node: strings.TrimPrefix(natsURL, "nats://"), dropped: make(chan pubTry, 1), stalled: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	k.Cleanup(p.close)
	k.OnAbort(p.close)
	return p
}

// url is what a server is given as its NATS URL.
func (p *ackDropper) url() string { return "nats://" + p.ln.Addr().String() }

// arm makes the next publish to the stream lose its acknowledgement.
func (p *ackDropper) arm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.tries = true, nil
}

// waitDropped returns the publish whose acknowledgement was dropped, and
// the publishes to the stream seen since arm; ok is false if none was
// dropped within d.
func (p *ackDropper) waitDropped(d time.Duration) (dropped pubTry, tries []pubTry, ok bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case dropped, ok = <-p.dropped:
	case <-timer.C:
	}
	return dropped, p.seen(), ok
}

// seen returns the publishes to the stream seen since arm.
func (p *ackDropper) seen() []pubTry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pubTry(nil), p.tries...)
}

// stall makes every link open now forward nothing more (they stay open).
func (p *ackDropper) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		p.stalled[c] = true
	}
}

// partition stalls every link and refuses new ones until heal.
func (p *ackDropper) partition() {
	p.stall()
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// heal takes new links again (the stalled ones stay stalled: their client
// has given them up, or will).
func (p *ackDropper) heal() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// isStalled reports whether the link c forwards nothing.
func (p *ackDropper) isStalled(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalled[c]
}

// chatsSent is how many of the stream's chat messages the node has sent
// through the proxy so far.
func (p *ackDropper) chatsSent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chats
}

// close stops accepting, closes every connection and waits for the
// goroutines. It may be called more than once.
func (p *ackDropper) close() {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	p.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}

// accept links every client to a connection of its own to the node. A
// client the node does not take (NATS stopped) is closed: it reconnects.
func (p *ackDropper) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		node, err := net.DialTimeout("tcp", p.node, testkit.IOTimeout)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			client.Close()
			node.Close()
			return
		}
		if p.cut {
			p.mu.Unlock()
			client.Close()
			node.Close()
			continue
		}
		p.conns = append(p.conns, client, node)
		p.wg.Go(func() { p.pump(client, node, p.fromClient) })
		p.wg.Go(func() { p.pump(node, client, p.fromNode) })
		p.mu.Unlock()
	}
}

// pump copies frames from src to dst, each as look (which may change it,
// or drop it: nil) says, until either side fails; then it closes both, so
// that the other direction's pump ends too. Every read and write has a
// deadline: a read waits at most the check's whole length.
func (p *ackDropper) pump(src, dst net.Conn, look func(frame) []byte) {
	defer dst.Close()
	defer src.Close()
	r := bufio.NewReaderSize(src, 64<<10)
	for {
		src.SetReadDeadline(time.Now().Add(testkit.WatchdogTimeout))
		f, err := readFrame(r)
		if errors.Is(err, errBadFrame) {
			p.k.Errorf("the suite's proxy in front of NATS cannot read a frame (%v): the link is closed", err)
		}
		if err != nil {
			return
		}
		if p.isStalled(src) {
			continue // read, so that the sender's writes go through, and lost
		}
		out := look(f)
		if out == nil {
			continue
		}
		dst.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
		if _, err := dst.Write(out); err != nil {
			return
		}
	}
}

// fromClient notes a publish to the stream, and takes it as the target if
// the proxy is armed (before the frame goes on: its answer cannot come
// first).
func (p *ackDropper) fromClient(f frame) []byte {
	if p.hookClient(f) {
		return nil
	}
	p.takeOther(f) // a bucket's publish (lostrefresh.go)
	if (f.op != "PUB" && f.op != "HPUB") || len(f.args) < 2 || !strings.HasPrefix(f.args[0], msgSubject) {
		return f.raw
	}
	try := pubTry{subject: f.args[0]}
	if f.op == "PUB" && len(f.args) == 3 || f.op == "HPUB" && len(f.args) == 4 {
		try.reply = f.args[1]
	}
	if f.op == "HPUB" {
		try.msgID = msgIDOf(f)
	}
	json.Unmarshal(f.body[f.hdrs:], &try.body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries = append(p.tries, try)
	if p.armed && try.reply != "" {
		p.armed, p.target = false, try.reply
	}
	return f.raw
}

// fromNode drops the target's answer, once, and takes connect_urls out of
// INFO.
func (p *ackDropper) fromNode(f frame) []byte {
	if out, taken := p.hookNode(f); taken {
		return out
	}
	switch f.op {
	case "MSG", "HMSG":
		p.mu.Lock()
		defer p.mu.Unlock()
		var body storedChat
		if json.Unmarshal(f.body[f.hdrs:], &body) == nil && body.Content != "" {
			p.chats++
		}
		if p.target == "" || len(f.args) == 0 || f.args[0] != p.target {
			return f.raw
		}
		p.target = ""
		for _, t := range p.tries {
			if t.reply == f.args[0] {
				select {
				case p.dropped <- t:
				default: // an earlier drop nobody waited for
				}
				break
			}
		}
		return nil
	case "INFO":
		var info map[string]json.RawMessage
		body := bytes.TrimSpace(f.raw[len("INFO"):])
		if json.Unmarshal(body, &info) != nil || info["connect_urls"] == nil {
			return f.raw
		}
		delete(info, "connect_urls")
		body, _ = json.Marshal(info)
		return append(append([]byte("INFO "), body...), "\r\n"...)
	}
	return f.raw
}

// frame is one operation of the NATS protocol, as read.
type frame struct {
	op   string   // upper case: INFO, CONNECT, PUB, HPUB, MSG, HMSG, PING, …
	args []string // the control line's other fields
	hdrs int      // HPUB, HMSG: the size of the headers, at the payload's start
	raw  []byte   // the whole frame: control line, payload, CRLF
	body []byte   // the payload, within raw
}

var errBadFrame = errors.New("not the NATS protocol")

// maxPayload bounds a payload the proxy reads (NATS's own default limit is
// 1 MB).
const maxPayload = 64 << 20

// readFrame reads one frame: the control line, then — for the operations
// that carry one — the payload whose size is the line's last field, then
// CRLF.
func readFrame(r *bufio.Reader) (frame, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return frame{}, fmt.Errorf("%w: a control line longer than %d bytes", errBadFrame, r.Size())
	}
	if err != nil {
		return frame{}, err
	}
	f := frame{raw: append([]byte(nil), line...)}
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return frame{}, fmt.Errorf("%w: an empty control line", errBadFrame)
	}
	f.op, f.args = strings.ToUpper(fields[0]), fields[1:]
	var min int // the fields a frame with a payload has before its size
	switch f.op {
	case "PUB":
		min = 1 // subject [reply] size
	case "HPUB":
		min = 2 // subject [reply] header-size total-size
	case "MSG":
		min = 2 // subject sid [reply] size
	case "HMSG":
		min = 3 // subject sid [reply] header-size total-size
	default:
		return f, nil // a control line alone
	}
	if len(f.args) < min+1 || len(f.args) > min+2 {
		return frame{}, fmt.Errorf("%w: %q", errBadFrame, bytes.TrimSpace(line))
	}
	size, err := strconv.Atoi(f.args[len(f.args)-1])
	if err != nil || size < 0 || size > maxPayload {
		return frame{}, fmt.Errorf("%w: size in %q", errBadFrame, bytes.TrimSpace(line))
	}
	if f.op == "HPUB" || f.op == "HMSG" {
		f.hdrs, err = strconv.Atoi(f.args[len(f.args)-2])
		if err != nil || f.hdrs < 0 || f.hdrs > size {
			return frame{}, fmt.Errorf("%w: header size in %q", errBadFrame, bytes.TrimSpace(line))
		}
	}
	n := len(f.raw)
	f.raw = append(f.raw, make([]byte, size+2)...)
	if _, err := io.ReadFull(r, f.raw[n:]); err != nil {
		return frame{}, err
	}
	if !bytes.HasSuffix(f.raw, []byte("\r\n")) {
		return frame{}, fmt.Errorf("%w: no CRLF after the %d bytes of %q", errBadFrame, size, bytes.TrimSpace(line))
	}
	f.body = f.raw[n : n+size]
	return f, nil
}

// msgIDOf is the Nats-Msg-Id header of an HPUB or HMSG ("" if none).
func msgIDOf(f frame) string {
	lines := strings.Split(string(f.body[:f.hdrs]), "\r\n")
	for _, l := range lines[1:] { // lines[0] is NATS/1.0
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Nats-Msg-Id") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
