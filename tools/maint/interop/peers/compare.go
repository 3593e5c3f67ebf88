//go:build linux

package main

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file is the byte-level comparison's pure logic: how replies are
// normalised, how two replies are compared, and the allow-list of the
// differences the course makes on purpose. It has no network code, so the
// unit tests check it against recorded replies.

// reply is what a server sent back for one probe: the bytes, and whether it
// closed the connection before the read window ended.
type reply struct {
	data   []byte
	closed bool
}

func (r reply) String() string {
	s := strconv.Quote(string(r.data))
	if len(s) > 400 {
		s = s[:400] + fmt.Sprintf("…\" (%d bytes)", len(r.data))
	}
	if r.closed {
		return s + " then close"
	}
	return s + " (connection kept)"
}

// A rule is one documented, deliberate difference. It applies to the probes
// of its protocol whose name is in probes (all probes if empty), and allows
// the difference when ok(original, ours) holds. Rules are narrow on purpose:
// each says exactly which bytes the course sends instead, so a difference
// the course did not decide on still fails.
type rule struct {
	proto  string
	probes []string
	why    string
	ok     func(orig, ours reply) bool
}

// verdict is the outcome of one probe.
type verdict struct {
	probe string
	sent  string
	orig  reply
	ours  reply
	same  bool
	rule  string // the allow-list rule that covers the difference, if any
	shown string // the difference as printed: sent / original / ours, normalised
}

func (v verdict) allowed() bool { return v.same || v.rule != "" }

// judge compares one probe's replies after normalising both with norm, and
// looks the difference up in the allow-list.
func judge(proto, probe, sent string, orig, ours reply, norm func(reply) reply, rules []rule) verdict {
	v := verdict{probe: probe, sent: sent, orig: orig, ours: ours}
	no, nu := norm(orig), norm(ours)
	if bytes.Equal(no.data, nu.data) && no.closed == nu.closed {
		v.same = true
		return v
	}
	v.shown = showDiff(proto, probe, sent, no, nu)
	for _, r := range rules {
		if r.proto == proto && (len(r.probes) == 0 || contains(r.probes, probe)) && r.ok(orig, ours) {
			v.rule = r.why
			return v
		}
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// showDiff prints one difference. Chat transcripts print only the event
// lines that differ; other protocols print both normalised replies.
func showDiff(proto, probe, sent string, no, nu reply) string {
	var b strings.Builder
	if proto == "chat" { // the scenario, already readable
		fmt.Fprintf(&b, "  %s probe %s\n    sent:     %s\n", proto, probe, sent)
		a, u := transcriptDiff(lines(no.data), lines(nu.data))
		fmt.Fprintf(&b, "    original: %s\n    ours:     %s\n", orNone(a), orNone(u))
		return b.String()
	}
	fmt.Fprintf(&b, "  %s probe %s\n    sent:     %s\n", proto, probe, clip(strconv.Quote(sent)))
	fmt.Fprintf(&b, "    original: %s\n    ours:     %s\n", no, nu)
	return b.String()
}

func orNone(ls []string) string {
	if len(ls) == 0 {
		return "(nothing)"
	}
	return strings.Join(ls, " | ")
}

// clip shortens a long quoted string for printing.
func clip(s string) string {
	if len(s) > 160 {
		return fmt.Sprintf("%s… (%d bytes)", s[:150], len(s))
	}
	return s
}

// verdictLines lists each probe's outcome, for -v.
func verdictLines(vs []verdict) string {
	var b strings.Builder
	for _, v := range vs {
		switch {
		case v.same:
			fmt.Fprintf(&b, "identical     %s\n", v.probe)
		case v.rule != "":
			fmt.Fprintf(&b, "allow-listed  %s: %s\n", v.probe, v.rule)
		default:
			fmt.Fprintf(&b, "DIFFERS       %s\n", v.probe)
		}
	}
	return b.String()
}

// summarise makes a diff case's evidence line and the printout of every
// difference outside the allow-list (sent / original / ours).
func summarise(vs []verdict) (evidence, details string, ok bool) {
	var same, allowed, differ int
	why := map[string]int{}
	var b strings.Builder
	for _, v := range vs {
		switch {
		case v.same:
			same++
		case v.rule != "":
			allowed++
			why[v.rule]++
		default:
			differ++
			b.WriteString(v.shown)
		}
	}
	evidence = fmt.Sprintf("%d probes: %d identical, %d allow-listed, %d differ", len(vs), same, allowed, differ)
	if allowed > 0 {
		evidence += " (allowed: " + strings.Join(sortedKeys(why), "; ") + ")"
	}
	if differ > 0 {
		var names []string
		for _, v := range vs {
			if !v.allowed() {
				names = append(names, v.probe)
			}
		}
		evidence += ": " + strings.Join(names, ", ")
	}
	return evidence, b.String(), differ == 0
}

// ---- jobs (chapter 03) ----

// normJobs sorts the reply lines: a server may answer pipelined requests out
// of order (clients correlate by id), which is not a difference.
func normJobs(r reply) reply {
	lines := strings.SplitAfter(string(r.data), "\n")
	sort.Strings(lines)
	return reply{data: []byte(strings.Join(lines, "")), closed: r.closed}
}

// ---- stock (chapters 04, 05) ----

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// stripANSI removes colour escape sequences (the originals colour their
// success replies).
func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// recordText is an 8192-byte reply record's text: the bytes before the
// first NUL (the originals leave garbage after it in error records).
func recordText(rec []byte) string {
	if i := bytes.IndexByte(rec, 0); i >= 0 {
		rec = rec[:i]
	}
	return string(rec)
}

// stockRecords splits a stock reply into its records' texts; a trailing
// partial record is kept whole, marked, so a framing difference shows.
func stockRecords(data []byte) []string {
	var out []string
	for len(data) >= 8192 {
		out = append(out, recordText(data[:8192]))
		data = data[8192:]
	}
	if len(data) > 0 {
		out = append(out, fmt.Sprintf("<partial record of %d bytes: %q>", len(data), recordText(data)))
	}
	return out
}

// normStock keeps each record's text (framing included: one record per
// text, a partial record marked).
func normStock(r reply) reply {
	var b strings.Builder
	for _, t := range stockRecords(r.data) {
		b.WriteString("<record>" + t)
	}
	return reply{data: []byte(b.String()), closed: r.closed}
}

// stockTexts is the records' texts with the colour codes removed.
func stockTexts(r reply) []string {
	recs := stockRecords(r.data)
	for i := range recs {
		recs[i] = stripANSI(recs[i])
	}
	return recs
}

// oursSays is a rule predicate: the course's reply is exactly these records
// and it keeps the connection, whatever the original did (it may have
// crashed: the thread-based original sometimes dies of a segmentation fault
// around a connection's end).
func oursSays(texts ...string) func(orig, ours reply) bool {
	return func(_, ours reply) bool {
		if ours.closed {
			return false
		}
		got := stockRecords(ours.data)
		if len(got) != len(texts) {
			return false
		}
		for i := range got {
			if got[i] != texts[i] {
				return false
			}
		}
		return true
	}
}

// sameWithoutColour: the original's reply is the course's once its ANSI
// colour codes are removed, and the connection ends the same way — or the
// original's ended (it crashes now and then) while the course's is kept.
func sameWithoutColour(orig, ours reply) bool {
	o, u := stockTexts(orig), stockRecords(ours.data)
	if len(o) != len(u) || (ours.closed && !orig.closed) {
		return false
	}
	for i := range o {
		if o[i] != u[i] {
			return false
		}
	}
	return true
}

// oursAnswersAll: pipelined lines. The course answers every line in order;
// the original event server answered only the first. The original's
// records (colours removed) must be the start of the course's.
func oursAnswersAll(n int) func(orig, ours reply) bool {
	return func(orig, ours reply) bool {
		o, u := stockTexts(orig), stockRecords(ours.data)
		if len(u) != n || len(o) >= n {
			return false
		}
		for i := range o {
			if o[i] != u[i] {
				return false
			}
		}
		return true
	}
}

// oursShows: the course's single record is a show reply.
func oursShows(_, ours reply) bool {
	u := stockRecords(ours.data)
	return len(u) == 1 && strings.HasPrefix(u[0], "[show]success\n")
}

// ---- HTTP (chapter 06) ----

// httpReply is a parsed HTTP/1.0 reply.
type httpReply struct {
	status  string
	headers []string // "Name: value", in order
	body    []byte
}

func (r httpReply) header(name string) string {
	for _, h := range r.headers {
		if k, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// parseHTTP splits a reply at the first empty line; header lines may end in
// \r\n or \n.
func parseHTTP(b []byte) (httpReply, error) {
	var r httpReply
	head, body, ok := bytes.Cut(b, []byte("\r\n\r\n"))
	if !ok {
		if head, body, ok = bytes.Cut(b, []byte("\n\n")); !ok {
			return r, fmt.Errorf("no end of headers in %q", tail(string(b), 100))
		}
	}
	lines := strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	r.status, r.headers, r.body = lines[0], lines[1:], body
	return r, nil
}

// normHTTP keeps the status line and the headers, byte for byte, and the
// body of a 200 reply (an error page's wording is the server's own).
func normHTTP(r reply) reply {
	p, err := parseHTTP(r.data)
	if err != nil {
		return r
	}
	var b strings.Builder
	b.WriteString(p.status + "\r\n")
	for _, h := range p.headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	if strings.Contains(p.status, " 200 ") {
		b.Write(p.body)
	}
	return reply{data: []byte(b.String()), closed: r.closed}
}

// sameErrorButWording: both are the same error status with the same
// headers, except Content-Length (the error page's wording, and so its
// length, is the server's own: the original names "./<path>").
func sameErrorButWording(orig, ours reply) bool {
	o, err1 := parseHTTP(orig.data)
	u, err2 := parseHTTP(ours.data)
	if err1 != nil || err2 != nil || o.status != u.status || strings.Contains(o.status, " 200 ") || len(o.headers) != len(u.headers) {
		return false
	}
	for i := range o.headers {
		if o.headers[i] != u.headers[i] && !(isHeader(o.headers[i], "Content-Length") && isHeader(u.headers[i], "Content-Length")) {
			return false
		}
	}
	return u.header("Content-Length") == strconv.Itoa(len(u.body))
}

// unansweredVsComplete: the original never answered (it kept waiting) and
// the course sent a complete 200 reply.
func unansweredVsComplete(orig, ours reply) bool {
	u, err := parseHTTP(ours.data)
	return len(orig.data) == 0 && !orig.closed && err == nil && u.status == "HTTP/1.0 200 OK" &&
		u.header("Content-Length") == strconv.Itoa(len(u.body))
}

func isHeader(line, name string) bool {
	k, _, ok := strings.Cut(line, ":")
	return ok && strings.EqualFold(strings.TrimSpace(k), name)
}

// oursStatus: the course answers with this status line (whatever the
// original did), a complete reply.
func oursStatus(status string) func(orig, ours reply) bool {
	return func(_, ours reply) bool {
		u, err := parseHTTP(ours.data)
		return err == nil && u.status == status && u.header("Content-Length") == strconv.Itoa(len(u.body))
	}
}

// ---- chat frames (chapters 01, 02, 05) ----

// Chat transcripts are text, one event per line ("bob <- BROADCAST
// sender=alice target=all payload=\"hi\""), so a reply here is a transcript
// and the rules compare event lines.

// transcriptDiff returns the lines only in a and only in b (as multisets).
func transcriptDiff(a, b []string) (onlyA, onlyB []string) {
	count := map[string]int{}
	for _, l := range b {
		count[l]++
	}
	for _, l := range a {
		if count[l] > 0 {
			count[l]--
		} else {
			onlyA = append(onlyA, l)
		}
	}
	count = map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		if count[l] > 0 {
			count[l]--
		} else {
			onlyB = append(onlyB, l)
		}
	}
	return onlyA, onlyB
}

// transcriptIs builds a rule predicate for chat: the only differing event
// lines are exactly these (the original's, then the course's).
func transcriptIs(origOnly, oursOnly []string) func(orig, ours reply) bool {
	return func(orig, ours reply) bool {
		a, b := transcriptDiff(lines(orig.data), lines(ours.data))
		return equalLists(a, origOnly) && equalLists(b, oursOnly)
	}
}

func lines(b []byte) []string {
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func equalLists(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func identity(r reply) reply { return r }

var spunFor = regexp.MustCompile(`I spun for [0-9.]+ seconds`)
