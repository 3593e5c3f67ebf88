//go:build linux

// Cases of chapter 06: Debian's HTTP clients and OSTEP's wclient against the
// course's web server, and the course's tools and CGI programs against OSTEP's.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ---- chapter 06 with Debian's clients ----

// docroot makes a folder to serve: index.html, a 1 KiB file, and the
// course's CGI programs under the names that pick their part.
func (h *harness) docroot() (string, error) {
	dir, err := h.tempDir("www")
	if err != nil {
		return "", err
	}
	files := map[string]string{
		"index.html": "<h1>interop</h1>\n",
		"f1k.txt":    strings.Repeat("0123456789abcde\n", 64),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return "", err
		}
	}
	prog, err := os.ReadFile(h.ours("cgiprog"))
	if err != nil {
		return "", err
	}
	for _, name := range []string{"spin.cgi", "env.cgi"} {
		if err := os.WriteFile(filepath.Join(dir, name), prog, 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// startOurWserver serves a fresh docroot with chapter 06's server.
func (h *harness) startOurWserver(ctx context.Context) (*proc, string, error) {
	www, err := h.docroot()
	if err != nil {
		return nil, "", err
	}
	return h.startOnFreePort(ctx, www, h.ours("wserver"), "-d", www, "-p", "{port}", "-t", "8", "-b", "64")
}

func curlCh06(ctx context.Context, h *harness) (string, error) {
	p, port, err := h.startOurWserver(ctx)
	if err != nil {
		return "", err
	}
	defer p.stop()
	base := "http://127.0.0.1:" + port
	checks := []struct {
		args []string
		want string
	}{
		{[]string{"-s", base + "/"}, "<h1>interop</h1>"},
		{[]string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", base + "/../../../etc/hostname"}, "403"},
		{[]string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", base + "/"}, "501"},
		{[]string{"-s", base + "/spin.cgi?0.1"}, "I spun for"},
	}
	for _, c := range checks {
		out, err := h.command(ctx, "", nil, append([]string{"curl", "--max-time", "5"}, c.args...)...)
		if err != nil || !strings.Contains(out, c.want) {
			return "", fmt.Errorf("curl %s: want %q, got %q (%v)", strings.Join(c.args, " "), c.want, tail(out, 120), err)
		}
	}
	return "curl: GET / 200, /../../../etc/hostname 403, POST 501, spin.cgi?0.1 ran", nil
}

func wrkCh06(ctx context.Context, h *harness) (string, error) {
	p, port, err := h.startOurWserver(ctx)
	if err != nil {
		return "", err
	}
	defer p.stop()
	out, err := h.command(ctx, "", nil, "wrk", "-t1", "-c10", "-d1s", "-H", "Connection: close", "http://127.0.0.1:"+port+"/f1k.txt")
	if err != nil {
		return "", err
	}
	ev, err := wrkVerdict(out)
	return serverAlive(p, ev, err)
}

func httperfCh06(ctx context.Context, h *harness) (string, error) {
	p, port, err := h.startOurWserver(ctx)
	if err != nil {
		return "", err
	}
	defer p.stop()
	const n = 300
	out, err := h.command(ctx, "", nil, "httperf", "--server", "127.0.0.1", "--port", port, "--uri", "/f1k.txt",
		"--num-conns", strconv.Itoa(n), "--rate", "150", "--timeout", "5")
	if err != nil {
		return "", err
	}
	ev, err := httperfVerdict(out, n)
	return serverAlive(p, ev, err)
}

// serverAlive adds to a verdict that the server survived the load.
func serverAlive(p *proc, ev string, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if !p.Alive() {
		return "", fmt.Errorf("%s; then the server died: %s", ev, p.exitStatus())
	}
	return ev + "; server still up", nil
}

// ---- chapter 06 and the OSTEP web server ----

func (h *harness) startOSTEP(ctx context.Context) (*proc, string, string, error) {
	www, err := h.docroot()
	if err != nil {
		return nil, "", "", err
	}
	p, port, err := h.startOnFreePort(ctx, www, h.peer(ostepServer), "-d", www, "-p", "{port}")
	return p, port, www, err
}

func wclientCase(ctx context.Context, h *harness) (string, error) {
	p, port, err := h.startOurWserver(ctx)
	if err != nil {
		return "", err
	}
	defer p.stop()
	out, err := h.command(ctx, "", nil, h.peer(ostepClient), "127.0.0.1", port, "/index.html")
	if err != nil {
		return "", err
	}
	if !strings.Contains(out, "HTTP/1.0 200 OK") || !strings.Contains(out, "<h1>interop</h1>") {
		return "", fmt.Errorf("wclient printed %q", tail(out, 200))
	}
	return serverAlive(p, "wclient: HTTP/1.0 200 OK and the page", nil)
}

func loadgenHTTPCase(ctx context.Context, h *harness) (string, error) {
	p, port, _, err := h.startOSTEP(ctx)
	if err != nil {
		return "", err
	}
	defer p.stop()
	out, err := h.command(ctx, "", nil, h.ours("loadgen"), "http", "-addr", "127.0.0.1:"+port, "-uri", "/f1k.txt",
		"-clients", "4", "-requests", "50", "-json", "-quiet", "-timeout", "5s", "-duration", "15s")
	if err != nil && !strings.Contains(out, "{") {
		return "", err
	}
	ev, verr := loadgenVerdict(out)
	return serverAlive(p, ev, verr)
}

// httpGet sends one raw HTTP/1.0 request and returns the whole reply.
func httpGet(port, uri string) (string, error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.0\r\n\r\n", uri); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, io.EOF) {
		return string(b), err
	}
	return string(b), nil
}

func cgiSpinCase(ctx context.Context, h *harness) (string, error) {
	p, port, _, err := h.startOSTEP(ctx)
	if err != nil {
		return "", err
	}
	defer p.stop()
	reply, err := httpGet(port, "/spin.cgi?0.1")
	if err != nil {
		return "", err
	}
	h.record("GET /spin.cgi?0.1", []byte(reply))
	resp, perr := parseHTTP([]byte(reply))
	if perr != nil || resp.status != "HTTP/1.0 200 OK" || !strings.Contains(string(resp.body), "I spun for") {
		return "", fmt.Errorf("GET /spin.cgi?0.1 answered %q; server log: %q", tail(reply, 200), tail(p.out.String(), 120))
	}
	return serverAlive(p, "GET /spin.cgi?0.1: 200 and \"I spun for 0.10 seconds\"", nil)
}

// cgiEnvCase: env.cgi must work when started the original's way (no
// arguments) and send a Content-Length that matches its body, which is what
// wrk and httperf need to count the reply as good.
func cgiEnvCase(ctx context.Context, h *harness) (string, error) {
	p, port, _, err := h.startOSTEP(ctx)
	if err != nil {
		return "", err
	}
	defer p.stop()
	reply, err := httpGet(port, "/env.cgi?x=1")
	if err != nil {
		return "", err
	}
	h.record("GET /env.cgi?x=1", []byte(reply))
	resp, perr := parseHTTP([]byte(reply))
	if perr != nil || !strings.Contains(string(resp.body), "QUERY_STRING=x=1") {
		return "", fmt.Errorf("GET /env.cgi?x=1 answered %q; server log: %q", tail(reply, 200), tail(p.out.String(), 120))
	}
	cl := resp.header("Content-Length")
	if cl == "" || cl != strconv.Itoa(len(resp.body)) {
		return "", fmt.Errorf("GET /env.cgi?x=1: Content-Length %q for a %d-byte body", cl, len(resp.body))
	}
	return serverAlive(p, "GET /env.cgi?x=1: 200, Content-Length "+cl+" matches the body", nil)
}
