package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckDelivery: a connection's deliveries pass only as one contiguous
// run of the channel's history (to its end, if the connection lasted), and
// each way of departing from it is named.
func TestCheckDelivery(t *testing.T) {
	history := []string{"a", "b", "c", "d", "marker"}
	cases := []struct {
		name  string
		got   []string
		toEnd bool
		want  string // a part of the reason; "" for none
	}{
		{"all", []string{"a", "b", "c", "d", "marker"}, true, ""},
		{"joined late", []string{"c", "d", "marker"}, true, ""},
		{"cut off by the kill", []string{"a", "b"}, false, ""},
		{"nothing, cut off", nil, false, ""},
		{"nothing, lasted", nil, true, "received nothing"},
		{"a gap", []string{"a", "c", "d", "marker"}, true, `after "a" received "c"; the history has "b" there`},
		{"another order", []string{"a", "c", "b", "d", "marker"}, true, "another order"},
		{"twice", []string{"a", "b", "b", "c", "d", "marker"}, true, `received "b" twice`},
		{"not stored", []string{"a", "x"}, false, `received "x", which is not in the history`},
		{"stops early", []string{"a", "b", "c"}, true, `2 messages before the history's end "marker"`},
		{"past the end", []string{"d", "marker", "marker"}, true, "twice"},
	}
	for _, c := range cases {
		got := checkDelivery(history, c.got, c.toEnd)
		if c.want == "" {
			assert.Empty(t, got, "%s: deliveries %q (to the end: %v)", c.name, c.got, c.toEnd)
			continue
		}
		assert.Contains(t, got, c.want, "%s: deliveries %q (to the end: %v)", c.name, c.got, c.toEnd)
	}
}
