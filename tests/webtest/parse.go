package webtest

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// countingReader counts the bytes a parser pulled from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// endless is a reader of 'a's without a line ending: a client that never
// ends its line. It stops after 4 MiB, so that a parser without a limit
// fails the check instead of exhausting memory.
type endless struct{ left int }

func (e *endless) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	n := min(len(p), e.left)
	for i := range p[:n] {
		p[i] = 'a'
	}
	e.left -= n
	return n, nil
}

// parse runs the chapter's ReadRequest on in.
func parse(impl Impl, in io.Reader) (Request, error) {
	return impl.ReadRequest(bufio.NewReader(in))
}

// Parse checks exercise 6.1: ReadRequest reads the request line and the
// headers (CRLF or bare LF), enforces the limits, and says which requests
// deserve 400 and 501; the server answers them so.
func Parse(t *testing.T, impl Impl) {
	k := testkit.New(t, "6.1")
	if _, err := parse(impl, strings.NewReader("GET / HTTP/1.0\r\n\r\n")); errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("ReadRequest is not implemented yet: %v", err)
	}
	check(k, "well-formed", func(k *testkit.T) { checkWellFormed(k, impl) })
	check(k, "statuses", func(k *testkit.T) { checkStatuses(k, impl) })
	check(k, "whole-header-before-501", func(k *testkit.T) { checkWholeHeaderBefore501(k, impl) })
	check(k, "limits", func(k *testkit.T) { checkLimits(k, impl) })
	check(k, "answers", func(k *testkit.T) { checkAnswers(k, impl) })
}

func checkWellFormed(k *testkit.T, impl Impl) {
	k.Helper()
	cases := []struct {
		in   string
		want Request
	}{
		{"GET /index.html HTTP/1.0\r\nHost: localhost\r\nUser-Agent: curl/8\r\n\r\n",
			Request{"GET", "/index.html", "HTTP/1.0", []string{"Host: localhost", "User-Agent: curl/8"}}},
		{"GET /a.txt?x=1 HTTP/1.1\nHost: localhost\nAccept: */*\n\n", // bare LF, as nc sends
			Request{"GET", "/a.txt?x=1", "HTTP/1.1", []string{"Host: localhost", "Accept: */*"}}},
		{"get / HTTP/1.0\r\nX-Mixed: endings\n\r\n", // any case; mixed line endings
			Request{"get", "/", "HTTP/1.0", []string{"X-Mixed: endings"}}},
		{"GET /sub/ HTTP/1.0\r\n\r\n", Request{"GET", "/sub/", "HTTP/1.0", nil}},
		{"GET /x HTTP/1.0\r\nEmpty:\r\nSpaced:   v a l  \r\n\r\n",
			Request{"GET", "/x", "HTTP/1.0", []string{"Empty:", "Spaced:   v a l  "}}},
	}
	for _, c := range cases {
		br := bufio.NewReader(strings.NewReader(c.in + "NEXT"))
		got, err := impl.ReadRequest(br)
		if err != nil {
			k.Fatalf("ReadRequest(%q)\n  want %+v\n   got error %v", c.in, c.want, err)
		}
		if got.Method != c.want.Method || got.URI != c.want.URI || got.Version != c.want.Version ||
			!slices.Equal(got.Header, c.want.Header) {
			k.Fatalf("ReadRequest(%q)\n  want %+v\n   got %+v", c.in, c.want, got)
		}
		if rest, _ := io.ReadAll(br); string(rest) != "NEXT" {
			k.Fatalf("ReadRequest(%q + \"NEXT\") must stop at the empty line that ends the header\n"+
				"  want \"NEXT\" left in the reader\n   got %q", c.in, rest)
		}
	}
	if _, err := parse(impl, strings.NewReader("")); !errors.Is(err, io.EOF) {
		k.Fatalf("ReadRequest on a connection closed before any byte (wrk does this)\n  want io.EOF\n   got %v", err)
	}
}

func checkStatuses(k *testkit.T, impl Impl) {
	k.Helper()
	cases := []struct {
		in   string
		code int
		why  string
	}{
		{"POST / HTTP/1.0\r\nContent-Length: 0\r\n\r\n", 501, "only GET is implemented"},
		{"HEAD / HTTP/1.0\r\n\r\n", 501, "only GET is implemented"},
		{"GET /\r\n\r\n", 400, "two words are not a request line"},
		{"GET / HTTP/1.0 extra\r\n\r\n", 400, "four words are not a request line"},
		{"GET / FTP/1.0\r\n\r\n", 400, "the version must be HTTP/…"},
		{"\r\n\r\n", 400, "an empty request line"},
		{"GET / HTTP/1.0\r\nHost localhost\r\n\r\n", 400, "a header line without a colon"},
		{"GET / HTTP/1.0\r\n: no name\r\n\r\n", 400, "a header line without a name"},
		{"GET / HTTP/1.0\r\nHost : x\r\n\r\n", 400, "white space between a header name and its colon (RFC 9112 §5.1: reject it)"},
		{"GET / HTTP/1.0\r\nX\tName: x\r\n\r\n", 400, "a tab inside a header name"},
		{"GET / HTTP/1.0\r\nX Name: x\r\n\r\n", 400, "a space inside a header name"},
		{"GET / HTTP/1.0\r\nHost: x\r\n", 400, "end of file inside the header (no empty line)"},
		{"GET / HTT", 400, "end of file inside the request line"},
	}
	for _, c := range cases {
		_, err := parse(impl, strings.NewReader(c.in))
		if err == nil || impl.Status(err) != c.code {
			k.Fatalf("ReadRequest(%q) (%s)\n  want an error with status %d\n   got %v (status %d)",
				c.in, c.why, c.code, err, impl.Status(err))
		}
	}
}

// checkWholeHeaderBefore501: a method other than GET is refused only after
// the whole header has been read. A server that answers 501 after the request
// line and closes the connection with the header still unread makes the
// kernel send a reset, which can destroy the 501 before the client reads it.
func checkWholeHeaderBefore501(k *testkit.T, impl Impl) {
	k.Helper()
	for _, in := range []string{
		"POST /form HTTP/1.0\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n",
		"DELETE /a.txt HTTP/1.1\nHost: x\n\n",
	} {
		br := bufio.NewReader(strings.NewReader(in + "NEXT"))
		_, err := impl.ReadRequest(br)
		rest, _ := io.ReadAll(br)
		if impl.Status(err) != 501 || string(rest) != "NEXT" {
			k.Fatalf("ReadRequest(%q + \"NEXT\")\n  want status 501 after reading the whole header, \"NEXT\" left in the reader\n"+
				"   got %v (status %d), %q left", in, err, impl.Status(err), rest)
		}
	}
}

func checkLimits(k *testkit.T, impl Impl) {
	k.Helper()
	// The request line may be 8 KiB, line ending included.
	pad := func(n int) string { return "/" + strings.Repeat("p", n-len("GET / HTTP/1.0\r\n")) }
	atLimit := "GET " + pad(maxRequestLine) + " HTTP/1.0\r\n\r\n"
	if r, err := parse(impl, strings.NewReader(atLimit)); err != nil || len(r.URI) != maxRequestLine-len("GET  HTTP/1.0\r\n") {
		k.Fatalf("a request line of exactly %d bytes (CRLF included) is allowed\n  want a request\n   got %v", maxRequestLine, err)
	}
	over := "GET " + pad(maxRequestLine+1) + " HTTP/1.0\r\n\r\n"
	if _, err := parse(impl, strings.NewReader(over)); impl.Status(err) != 400 {
		k.Fatalf("a request line of %d bytes is over the limit of %d\n  want status 400\n   got %v", maxRequestLine+1, maxRequestLine, err)
	}
	// All header lines together may be 64 KiB, line endings included.
	headers := func(total int) string {
		var b strings.Builder
		for total > 0 {
			n := min(total, 1000)
			if total-n > 0 && total-n < len("X: \r\n") {
				n -= len("X: \r\n")
			}
			b.WriteString("X: " + strings.Repeat("h", n-len("X: \r\n")) + "\r\n")
			total -= n
		}
		return b.String()
	}
	in := "GET / HTTP/1.0\r\n" + headers(maxHeaderBytes-2) + "\r\n" // the empty line counts
	if r, err := parse(impl, strings.NewReader(in)); err != nil || len(r.Header) == 0 {
		k.Fatalf("header lines of exactly %d bytes in all (line endings and the empty line included) are allowed\n"+
			"  want a request\n   got %v", maxHeaderBytes, err)
	}
	in = "GET / HTTP/1.0\r\n" + headers(maxHeaderBytes-1) + "\r\n"
	if _, err := parse(impl, strings.NewReader(in)); impl.Status(err) != 400 {
		k.Fatalf("header lines of %d bytes in all are over the limit of %d\n  want status 400\n   got %v",
			maxHeaderBytes+1, maxHeaderBytes, err)
	}
	// A client that never ends its line must be refused after about the
	// limit, not read until memory runs out.
	for _, c := range []struct {
		what   string
		prefix string
		limit  int
	}{
		{"a request line that never ends", "GET /", maxRequestLine},
		{"a header line that never ends", "GET / HTTP/1.0\r\nX: ", maxRequestLine + maxHeaderBytes},
	} {
		cr := &countingReader{r: io.MultiReader(strings.NewReader(c.prefix), &endless{left: 4 << 20})}
		_, err := parse(impl, cr)
		if impl.Status(err) != 400 || cr.n > c.limit+64<<10 {
			k.Fatalf("%s: want status 400 after reading about %d bytes\n  got %v after reading %d bytes",
				c.what, c.limit, err, cr.n)
		}
	}
}

// checkAnswers: the handler answers parse errors with the error page, and an
// empty connection with nothing.
func checkAnswers(k *testkit.T, impl Impl) {
	k.Helper()
	s := newSite(k)
	hs := startHandler(k, impl, Config{Root: s.root})
	for _, c := range []struct {
		req  string
		code int
	}{
		{"POST /a.txt HTTP/1.0\r\n\r\n", 501},
		{"DELETE /a.txt HTTP/1.1\nHost: x\n\n", 501},
		{"GET /a.txt\r\n\r\n", 400},
		{"GET /a.txt HTTP/1.0\r\nbroken header\r\n\r\n", 400},
	} {
		resp, err := exchange(hs.addr, c.req)
		if err != nil {
			k.Fatalf("sent %q\n  want a %d response, got %s", c.req, c.code, describe(resp, err))
		}
		expectError(k, c.req, resp, c.code)
	}
	c := dial(k, hs.addr)
	c.CloseWrite()
	resp, err := readResponse(c)
	if err != nil || len(resp.raw) != 0 {
		k.Fatalf("connected and sent nothing (then half-closed): want the connection closed without a response\n  got %s",
			describe(resp, err))
	}
}

// FuzzReadRequest is the fuzz target of exercise 6.1: whatever arrives,
// ReadRequest returns (it never panics or loops), stays within the limits,
// and what it accepts is a GET request with three clean fields.
func FuzzReadRequest(f *testing.F, impl Impl) {
	for _, seed := range []string{
		"GET / HTTP/1.0\r\n\r\n",
		"GET /a.txt?x=1 HTTP/1.1\nHost: x\n\n",
		"POST / HTTP/1.0\r\n\r\n",
		"GET / HTTP/1.0\r\nHost x\r\n\r\n",
		"GET / HTTP/1.0\r\nHost: x\r\n",
		"",
		"\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		cr := &countingReader{r: strings.NewReader(string(in))}
		req, err := impl.ReadRequest(bufio.NewReader(cr))
		if errors.Is(err, lab.ErrNotImplemented) {
			t.Skip("ReadRequest is not implemented yet")
		}
		if err != nil {
			if code := impl.Status(err); !errors.Is(err, io.EOF) && code != 400 && code != 501 {
				t.Fatalf("ReadRequest(%q): error %v has status %d; want 400 or 501 (or io.EOF)", in, err, code)
			}
			return
		}
		if !strings.EqualFold(req.Method, "GET") {
			t.Fatalf("ReadRequest(%q) accepted method %q; only GET is served", in, req.Method)
		}
		for _, field := range append([]string{req.Method, req.URI, req.Version}, req.Header...) {
			if strings.ContainsAny(field, "\r\n") {
				t.Fatalf("ReadRequest(%q) returned %+v: a field contains a line ending", in, req)
			}
		}
		if !strings.HasPrefix(req.Version, "HTTP/") {
			t.Fatalf("ReadRequest(%q) accepted version %q", in, req.Version)
		}
	})
}
