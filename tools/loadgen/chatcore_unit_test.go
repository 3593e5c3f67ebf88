package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseUint32(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"4294967295", 1<<32 - 1, true},
		{"4294967296", 0, false}, {"", 0, false}, {"12a", 0, false}, {"-1", 0, false}, {"99999999999", 0, false},
	} {
		got, ok := parseUint32([]byte(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("parseUint32(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIsEvent(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{`{"payload":{"user_id":3},"type_id":126}`, true},
		{`{"payload":{"user_id":3},"type_id":125}`, true},
		{`{"payload":{"channel":{"id":1,"name":"x"},"user_id":3},"type_id":129}`, true},
		{`{"payload":{"request_id":3},"type_id":124}`, false},
		{`{"payload":{"channel_id":1,"content":"x","user_id":3},"type_id":103}`, false},
		{`{"payload":{"request_id":3},"type_id":1126}`, false},
		{`126}`, false},
	} {
		if got := isEvent([]byte(tc.body)); got != tc.want {
			t.Errorf("isEvent(%s) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

func TestFirstErrors(t *testing.T) {
	if firstErrors([]error{nil, nil}, 3) != nil {
		t.Fatal("no errors: want nil")
	}
	var errs []error
	for i := range 10 {
		errs = append(errs, nil, fmt.Errorf("e%d", i))
	}
	got := firstErrors(errs, 3).Error()
	if want := "e0\ne1\ne2\n… and 7 more"; got != want {
		t.Fatalf("firstErrors = %q, want %q", got, want)
	}
	if !strings.Contains(firstErrors([]error{errors.New("x")}, 3).Error(), "x") {
		t.Fatal("one error: want it")
	}
}
