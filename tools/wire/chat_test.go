package wire

import (
	"fmt"
	"strings"
	"testing"
)

func TestUserList(t *testing.T) {
	if got := string(UserList(nil, nil)); got != NoUsers {
		t.Fatalf("UserList(none) = %q, want %q", got, NoUsers)
	}
	online := map[string]bool{"bob": true}
	got := string(UserList([]string{"carol", "bob", "alice", "bob"}, func(n string) bool { return online[n] }))
	want := "alice | active: 0\nbob | active: 1\ncarol | active: 0\n"
	if got != want {
		t.Fatalf("UserList = %q, want %q (sorted, each name once)", got, want)
	}
	var many []string
	for i := range 5000 {
		many = append(many, fmt.Sprintf("user%05d", i))
	}
	list := UserList(many, func(string) bool { return false })
	if len(list) > MaxPayload || len(list) < MaxPayload-len(UserLine("user00000", false)) || !strings.HasSuffix(string(list), "\n") {
		t.Fatalf("a long list: %d bytes, want whole lines up to %d", len(list), MaxPayload)
	}
}
