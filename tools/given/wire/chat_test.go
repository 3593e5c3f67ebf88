package wire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUserList(t *testing.T) {
	require.Equal(t, NoUsers, string(UserList(nil, nil)), "UserList(none)")
	online := map[string]bool{"bob": true}
	got := string(UserList([]string{"carol", "bob", "alice", "bob"}, func(n string) bool { return online[n] }))
	want := "alice | active: 0\nbob | active: 1\ncarol | active: 0\n"
	require.Equal(t, want, got, "UserList (sorted, each name once)")
	var many []string
	for i := range 5000 {
		many = append(many, fmt.Sprintf("user%05d", i))
	}
	list := UserList(many, func(string) bool { return false })
	if len(list) > MaxPayload || len(list) < MaxPayload-len(UserLine("user00000", false)) || !strings.HasSuffix(string(list), "\n") {
		t.Fatalf("a long list: %d bytes, want whole lines up to %d", len(list), MaxPayload)
	}
}
