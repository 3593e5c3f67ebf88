package wire

import (
	"slices"
	"strings"
)

// The chat servers' reply payloads: the one home of these texts, which the
// servers of chapters 01, 02 and 05, the chat client and the suites share.
const (
	// ReplyOK answers a REGISTRATION or LOGIN that succeeded.
	ReplyOK = "OK"
	// ReplyFail answers a REGISTRATION or LOGIN that was refused.
	ReplyFail = "FAIL"
	// NotOnline answers a PRIVATE_MSG whose target is not logged in.
	NotOnline = "User not online."
	// NoUsers is the QUERY_USER answer when nobody is registered.
	NoUsers = "(no users registered)"
)

// UserLine is one line of a QUERY_USER answer: "<name> | active: <0|1>\n".
func UserLine(name string, active bool) string {
	flag := "0"
	if active {
		flag = "1"
	}
	return name + " | active: " + flag + "\n"
}

// UserList is the payload of a QUERY_USER answer: one UserLine per registered
// name, sorted bytewise, each name once; NoUsers (without a newline) when
// there are none. A list longer than a frame can carry is cut after the last
// whole line that fits in MaxPayload bytes.
func UserList(names []string, active func(name string) bool) []byte {
	if len(names) == 0 {
		return []byte(NoUsers)
	}
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var b strings.Builder
	for _, name := range sorted {
		line := UserLine(name, active(name))
		if b.Len()+len(line) > MaxPayload {
			break
		}
		b.WriteString(line)
	}
	return []byte(b.String())
}
