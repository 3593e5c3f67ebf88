package chatcoreload

import (
	"bytes"
	"fmt"
)

// OrderCheck is what Config.Deliveries found. Every tester joined before
// the first message was sent, so each must receive every message of the
// run, once, in the channel's one order, but for the last ones, in flight
// when the run ended: its list must be a prefix of the longest list.
type OrderCheck struct {
	Testers  int // testers whose deliveries were checked
	Messages int // in the longest list: the channel's order as far as any tester saw it
	// Duplicated is the testers that received a message twice.
	Duplicated int
	// Departed is the testers whose list is not a prefix of the longest:
	// a gap, or another order.
	Departed int
	// InFlight is the messages, over all testers, that the longest list
	// has after the end of a tester's own: on their way when the run ended.
	InFlight int
	// First describes the first departure or duplicate ("" if none).
	First string
}

// OK reports whether every tester received every message once, in one order.
func (o OrderCheck) OK() bool { return o.Duplicated == 0 && o.Departed == 0 }

func (o OrderCheck) String() string {
	s := fmt.Sprintf("%d testers, %d messages: %d received one twice, %d departed from the one order, %d in flight at the end",
		o.Testers, o.Messages, o.Duplicated, o.Departed, o.InFlight)
	if o.First != "" {
		s += " (first: " + o.First + ")"
	}
	return s
}

// checkOrder holds every tester's list to the longest one.
func checkOrder(lists [][]string) OrderCheck {
	o := OrderCheck{Testers: len(lists)}
	var longest []string
	for _, l := range lists {
		if len(l) > len(longest) {
			longest = l
		}
	}
	o.Messages = len(longest)
	note := func(format string, args ...any) {
		if o.First == "" {
			o.First = fmt.Sprintf(format, args...)
		}
	}
	for i, l := range lists {
		seen := make(map[string]bool, len(l))
		for _, m := range l {
			if seen[m] {
				o.Duplicated++
				note("tester %d received %q twice", i, m)
				break
			}
			seen[m] = true
		}
		for j, m := range l {
			if m != longest[j] {
				o.Departed++
				note("tester %d received %q where the longest list has %q (message %d)", i, m, longest[j], j+1)
				break
			}
		}
		o.InFlight += len(longest) - len(l)
	}
	return o
}

// chatOf reads a 103 frame's channel and content without decoding it as
// JSON: with N testers each frame is read N times. The encoder writes keys
// in alphabetical order: {"payload":{"channel_id":C,"content":"…","user_id":U},"type_id":103}.
// A content with an escape is left to the full decoder (ok false).
func chatOf(body []byte) (channel uint32, content []byte, ok bool) {
	const head, mid = `{"payload":{"channel_id":`, `,"content":"`
	if !bytes.HasSuffix(body, []byte(`},"type_id":103}`)) || !bytes.HasPrefix(body, []byte(head)) {
		return 0, nil, false
	}
	rest := body[len(head):]
	i := bytes.IndexByte(rest, ',')
	if i < 0 {
		return 0, nil, false
	}
	channel, ok = parseUint32(rest[:i])
	if !ok || !bytes.HasPrefix(rest[i:], []byte(mid)) {
		return 0, nil, false
	}
	rest = rest[i+len(mid):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return 0, nil, false
	}
	return channel, rest[:end], true
}
