package chatcoreload

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"serverlab/tools/given/chatcore/proto"
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

func TestOthersEcho(t *testing.T) {
	c := &client{}
	c.user.Store(7)
	for _, tc := range []struct {
		m    proto.Message
		want bool
	}{
		{proto.ReceiveChat{ChannelID: 1, Content: `"user_id":7}`, UserID: 8}, true},
		{proto.ReceiveChat{ChannelID: 1, Content: "x", UserID: 7}, false},
		{proto.UserLoginEvent{UserID: 8}, false},
	} {
		b, _ := proto.Encode(tc.m)
		if got := c.othersEcho(b[proto.HeaderSize:]); got != tc.want {
			t.Errorf("othersEcho(%s) = %v, want %v", b[proto.HeaderSize:], got, tc.want)
		}
	}
}

func TestParseSteps(t *testing.T) {
	got, err := ParseSteps(" 5,25 ,450")
	if err != nil || fmt.Sprint(got) != "[5 25 450]" {
		t.Errorf("ParseSteps(\" 5,25 ,450\") = %v, %v; want [5 25 450]", got, err)
	}
	if _, err := ParseSteps(DefaultSteps); err != nil {
		t.Errorf("ParseSteps(DefaultSteps): %v", err)
	}
	for _, bad := range []string{"", "5,,25", "0", "-3", "x"} {
		if got, err := ParseSteps(bad); err == nil || !strings.HasPrefix(err.Error(), "-steps: ") {
			t.Errorf("ParseSteps(%q) = %v, %v; want a -steps error", bad, got, err)
		}
	}
}

func TestRunRefusesNoClients(t *testing.T) {
	if _, err := Run(t.Context(), Config{Addr: "127.0.0.1:9", Clients: 0}); err == nil {
		t.Error("Run with 0 clients: want an error")
	}
}
