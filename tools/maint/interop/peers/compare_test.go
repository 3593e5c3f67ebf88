//go:build linux

package main

import (
	"strconv"
	"strings"
	"testing"
)

// These tests pin the allow-list down with replies recorded from the
// originals and from the course's servers: each deliberate difference is
// allowed, and the differences the course has not decided on (or has not
// fixed yet) still fail — with the fixed reply they pass.

// record pads text to one 8192-byte stock reply record, with garbage after
// the NUL as the originals leave it.
func record(text string, garbage string) string {
	b := make([]byte, 8192)
	copy(b, text)
	copy(b[len(text)+1:], garbage)
	return string(b)
}

func kept(s string) reply   { return reply{data: []byte(s)} }
func closed(s string) reply { return reply{data: []byte(s), closed: true} }

type judgeCase struct {
	name, probe string
	orig, ours  reply
	want        string // "same", "allowed" or "differ"
}

func checkJudge(t *testing.T, proto string, norm func(reply) reply, rules []rule, cases []judgeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := judge(proto, c.probe, "sent", c.orig, c.ours, norm, rules)
			got := "differ"
			switch {
			case v.same:
				got = "same"
			case v.rule != "":
				got = "allowed"
			}
			if got != c.want {
				t.Errorf("probe %s: want %s, got %s (rule %q)\noriginal: %s\nours:     %s", c.probe, c.want, got, v.rule, c.orig, c.ours)
			}
		})
	}
}

func TestJudgeJobs(t *testing.T) {
	checkJudge(t, "jobs", normJobs, jobRules, []judgeCase{
		{"identical", "prime", kept("OK 1 prime\n"), kept("OK 1 prime\n"), "same"},
		{"out of order is not a difference", "pipelined",
			kept("OK 1 prime\nOK 2 sorted 1 checksum 0\nOK 3 4993892634952068459\n"),
			kept("OK 2 sorted 1 checksum 0\nOK 1 prime\nOK 3 4993892634952068459\n"), "same"},
		// istream >> cmd: recorded from ThreadForge and from ch03 before the fix.
		{"leading spaces before the fix", "leading-spaces", kept("OK 1 prime\n"), kept("ERROR 1 unsupported command\n"), "differ"},
		{"leading spaces after the fix", "leading-spaces", kept("OK 1 prime\n"), kept("OK 1 prime\n"), "same"},
		{"tab separator before the fix", "tab-separator", kept("ERROR 1 invalid integer\n"), kept("ERROR 1 unsupported command\n"), "differ"},
		{"HASH\\t before the fix", "hash-tab", kept("OK 1 5073465729955206604\n"), kept("ERROR 1 unsupported command\n"), "differ"},
		{"4097 bytes before the fix", "4097-no-newline", closed("ERROR 1 request too large\n"), kept(""), "differ"},
		{"4097 bytes answered but kept open", "4097-no-newline", closed("ERROR 1 request too large\n"), kept("ERROR 1 request too large\n"), "differ"},
		{"4097 bytes after the fix", "4097-no-newline", closed("ERROR 1 request too large\n"), closed("ERROR 1 request too large\n"), "same"},
		{"long line with its newline: closed on purpose", "5000-with-newline", kept("ERROR 1 request too large\n"), closed("ERROR 1 request too large\n"), "allowed"},
		{"long line with its newline: kept, as ThreadForge", "5000-with-newline", kept("ERROR 1 request too large\n"), kept("ERROR 1 request too large\n"), "same"},
		{"long line with its newline: another answer", "5000-with-newline", kept("ERROR 1 request too large\n"), closed("ERROR 1 unsupported command\n"), "differ"},
		{"closing is allowed for the long line only", "4097-no-newline", kept("ERROR 1 request too large\n"), closed("ERROR 1 request too large\n"), "differ"},
		{"another id", "prime", kept("OK 1 prime\n"), kept("OK 2 prime\n"), "differ"},
	})
}

func TestJudgeStock(t *testing.T) {
	show := "1 10 100\n2 20 200\n"
	origShow := record("\x1b[0m[show]\x1b[0;32msuccess\n\x1b[0m"+show, "")
	oursShow := record("[show]success\n"+show, "")
	checkJudge(t, "stock", normStock, stockRules, []judgeCase{
		{"ANSI colours", "show", kept(origShow), kept(oursShow), "allowed"},
		{"ANSI colours but other counts", "show", kept(origShow), kept(record("[show]success\n1 10 100\n2 19 200\n", "")), "differ"},
		{"garbage after the NUL is not compared", "exit-less",
			kept(record("Invalid Argument\n", "No Such Command\n\x00Please Type")), kept(record("Invalid Argument\n", "")), "same"},
		{"unknown id: write-up text", "buy-unknown", kept(record("\x1b[0m[buy] failed\n", "")), kept(record("NO SUCH STOCK\n", "")), "allowed"},
		{"the write-up text, then a close the original did not make", "buy-unknown", kept(record("\x1b[0m[buy] failed\n", "")), closed(record("NO SUCH STOCK\n", "")), "differ"},
		{"the original crashed after answering", "unknown", closed(record("No Such Command\n", "")), kept(record("No Such Command\n", "")), "allowed"},
		{"the write-up text only where it is the rule", "buy", kept(record("\x1b[0m[buy] failed\n", "")), kept(record("NO SUCH STOCK\n", "")), "differ"},
		{"atoi: Invalid Argument", "buy-suffix", kept(record("\x1b[0m[buy]\x1b[0;32msuccess\n\x1b[0m", "")), kept(record("Invalid Argument\n", "")), "allowed"},
		{"atoi: anything else is not allowed", "buy-suffix", kept(record("\x1b[0m[buy]\x1b[0;32msuccess\n\x1b[0m", "")), kept(record("No Such Command\n", "")), "differ"},
		{"a short record is a framing error", "buy-unknown", kept(record("\x1b[0m[buy] failed\n", "")), kept("NO SUCH STOCK\n"), "differ"},
		{"pipelined: the course answers all", "pipelined", kept(origShow),
			kept(oursShow + record("[buy]success\n", "") + record("[sell]success\n", "")), "allowed"},
		{"pipelined: the course must answer all", "pipelined", kept(origShow), kept(oursShow + record("[buy]success\n", "")), "differ"},
		// loadgen stock before its fix: the reply it sent was fine; the harness compares servers, not tools.
		{"connection closed where the original kept it", "show", kept(origShow), closed(oursShow), "differ"},
		{"the original crashed after a coloured reply", "show", closed(origShow), kept(oursShow), "allowed"},
	})
}

func TestJudgeChat(t *testing.T) {
	login := "alice <- type=2 sender=\"server\" target=\"alice\" payload=\"OK\"\nbob <- type=2 sender=\"server\" target=\"bob\" payload=\"OK\"\n"
	tr := func(extra ...string) reply { return kept(login + strings.Join(extra, "\n") + "\n") }
	spoofOrig := tr(`bob <- type=3 sender="mallory" target="all" payload="it was me"`)
	checkJudge(t, "chat", identity, chatRules, []judgeCase{
		{"sender fix, target kept", "broadcast-spoofed", spoofOrig, tr(`bob <- type=3 sender="alice" target="all" payload="it was me"`), "allowed"},
		{"sender fix, target rewritten to ALL (before the relay fix)", "broadcast-spoofed", spoofOrig, tr(`bob <- type=3 sender="alice" target="ALL" payload="it was me"`), "differ"},
		{"target rewritten to ALL", "broadcast-all", tr(`bob <- type=3 sender="alice" target="all" payload="hi all"`),
			tr(`bob <- type=3 sender="alice" target="ALL" payload="hi all"`), "differ"},
		{"target kept", "broadcast-all", tr(`bob <- type=3 sender="alice" target="all" payload="hi all"`),
			tr(`bob <- type=3 sender="alice" target="all" payload="hi all"`), "same"},
		{"the sender fix only where it is the rule", "broadcast-all", tr(`bob <- type=3 sender="mallory" target="all" payload="it was me"`),
			tr(`bob <- type=3 sender="alice" target="all" payload="it was me"`), "differ"},
		{"duplicate name refused", "register-other-password",
			kept("a1 <- type=1 sender=\"server\" target=\"alice\" payload=\"OK\"\na1: closed\na2 <- type=1 sender=\"server\" target=\"alice\" payload=\"OK\"\na2: closed\n"),
			kept("a1 <- type=1 sender=\"server\" target=\"alice\" payload=\"OK\"\na1: closed\na2 <- type=1 sender=\"server\" target=\"alice\" payload=\"FAIL\"\na2: closed\n"), "allowed"},
		{"64 KiB cap", "payload-over-64KiB", tr(`bob <- type=3 sender="alice" target="all" payload=<70000 bytes>`), tr("alice: closed"), "allowed"},
		{"64 KiB cap: relaying as well is not the cap", "payload-over-64KiB", tr(`bob <- type=3 sender="alice" target="all" payload=<70000 bytes>`),
			tr("alice: closed", `bob <- type=3 sender="alice" target="all" payload=<70000 bytes>`), "differ"},
		{"query format", "query-users", tr(`alice <- type=5 sender="server" target="alice" payload="alice | active: 1\nbob | active: 1\n"`),
			tr(`alice <- type=5 sender="server" target="alice" payload="alice | active: 1\nbob | active: 0\n"`), "differ"},
	})
}

func TestJudgeHTTP(t *testing.T) {
	const ok = "HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: 14\r\nContent-Type: text/html\r\n\r\n<h1>diff</h1>\n"
	notFound := func(body string) reply {
		return closed("HTTP/1.0 404 Not found\r\nContent-Type: text/html\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
	}
	checkJudge(t, "http", normHTTP, httpRules, []judgeCase{
		{"identical 200", "html", closed(ok), closed(ok), "same"},
		{"a 200 body differs", "html", closed(ok), closed(strings.Replace(ok, "diff", "DIFF", 1)), "differ"},
		{"a header differs", "html", closed(ok), closed(strings.Replace(ok, "text/html", "text/plain", 1)), "differ"},
		{"error page wording", "missing", notFound("<p>./nope.html: not found</p>"), notFound("<p>/nope.html: no such file</p>"), "allowed"},
		{"error status differs", "missing", notFound("x"), closed("HTTP/1.0 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: 1\r\n\r\nx"), "differ"},
		{"error page with a wrong Content-Length", "missing", notFound("x"), closed("HTTP/1.0 404 Not found\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\nx"), "differ"},
		{"traversal refused", "traversal", closed("HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhost\n"),
			closed("HTTP/1.0 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: 2\r\n\r\nno"), "allowed"},
		{"traversal served", "traversal", closed("HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhost\n"),
			closed("HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nroot\n"), "differ"},
		{"bare LF accepted", "bare-lf", kept(""), closed(ok), "allowed"},
		{"bare LF on another probe", "html", kept(""), closed(ok), "differ"},
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestChatFrames(t *testing.T) {
	f := frame(tBroadcast, "alice", "all", "hi")
	if len(f) != 74 {
		t.Fatalf("frame is %d bytes, want 72 + 2", len(f))
	}
	ev, rest, ok := decodeEvent(append(f, frame(tStatus, "bob", "", "")[:10]...))
	if !ok || ev != `type=3 sender="alice" target="all" payload="hi"` || len(rest) != 10 {
		t.Errorf("decodeEvent: %q, %d bytes left, ok %v", ev, len(rest), ok)
	}
	if _, _, ok := decodeEvent(rest); ok {
		t.Error("decodeEvent accepted a partial header")
	}
	long := frame(tReg, strings.Repeat("n", 40), "", "pw")
	if got := cstr(long[8:40]); got != strings.Repeat("n", 31) {
		t.Errorf("a name is cut at 31 bytes and NUL-terminated, got %q", got)
	}
	ev, _, _ = decodeEvent(frame(tBroadcast, "a", "all", strings.Repeat("x", 300)))
	if !strings.HasSuffix(ev, "payload=<300 bytes>") {
		t.Errorf("long payloads are summarised: %q", ev)
	}
}

func TestTranscriptDiff(t *testing.T) {
	a, b := transcriptDiff([]string{"x", "y", "y", "z"}, []string{"y", "z", "w"})
	if strings.Join(a, ",") != "x,y" || strings.Join(b, ",") != "w" {
		t.Errorf("only in a %q, only in b %q", a, b)
	}
}

func TestSummarise(t *testing.T) {
	vs := []verdict{
		judge("jobs", "prime", "PRIME 7\n", kept("OK 1 prime\n"), kept("OK 1 prime\n"), normJobs, nil),
		judge("jobs", "leading-tab", "\tPRIME 7\n", kept("OK 1 prime\n"), kept("ERROR 1 unsupported command\n"), normJobs, nil),
		judge("stock", "show", "show\n", kept(record("\x1b[0m[show]\x1b[0;32msuccess\n\x1b[0m", "")), kept(record("[show]success\n", "")), normStock, stockRules),
	}
	ev, details, ok := summarise(vs)
	if ok {
		t.Error("a difference outside the allow-list must fail")
	}
	for _, want := range []string{"3 probes: 1 identical, 1 allow-listed, 1 differ", "ANSI colour codes", ": leading-tab"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence %q lacks %q", ev, want)
		}
	}
	for _, want := range []string{`sent:     "\tPRIME 7\n"`, `original: "OK 1 prime\n" (connection kept)`, `ours:     "ERROR 1 unsupported command\n" (connection kept)`} {
		if !strings.Contains(details, want) {
			t.Errorf("details lack %q:\n%s", want, details)
		}
	}
}
