package chatcoretest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"math"
	"math/big"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Frames checks exercise 7.1: the read loop. Every request gets exactly one
// answer carrying its request_id; frames are read whole however they are
// split; and every frame that cannot be handled gets a defined answer
// instead of the original's silence, without closing the connection —
// except one over 1 MiB, which gets a notice and is closed. Nobody else
// notices any of it. With TLS configured, the server speaks TLS. An Accept
// error that no retry cures ends Serve with that error.
func Frames(t *testing.T, impl Impl) {
	k := testkit.New(t, "7.1")
	e := start(k, impl, Config{})

	check(k, e, "request-id-pairing", func(k *testkit.T, e *env) {
		c := e.dial("client")
		reqs := []proto.Requester{
			proto.GetChannelsRequest{RequestID: 1},
			proto.GetUserRequest{RequestID: math.MaxUint64, Name: "nobody"},
			proto.GetChatsRequest{RequestID: 7, ChannelID: 1, Limit: 5},
			proto.LogoutRequest{RequestID: 7}, // ids need not be unique
		}
		for _, r := range reqs {
			c.send(r)
		}
		for _, r := range reqs {
			m := c.next("answers come in order, one per request")
			a, ok := m.(proto.Requester)
			if !ok || a.Request() != r.Request() || (m.Type() != proto.TypeErrorResponse && m.Type() != proto.ResponseType[r.Type()]) {
				k.Fatalf("the answer to %s must be %d or 100 with request_id %d\n   got: %s%s",
					show(r), proto.ResponseType[r.Type()], r.Request(), show(m), c.context())
			}
		}
	})

	check(k, e, "split-and-joined-frames", func(k *testkit.T, e *env) {
		c := e.dial("client")
		f, _ := proto.Encode(proto.GetChannelsRequest{RequestID: 11})
		for i := range f {
			c.write(f[i:i+1], "one byte of a frame")
		}
		c.expectAnswer("a frame written one byte at a time", 11)
		two, _ := proto.Encode(proto.GetChannelsRequest{RequestID: 12})
		three, _ := proto.Encode(proto.GetChannelsRequest{RequestID: 13})
		c.write(append(two, three...), "two frames in one write")
		c.expectAnswer("the first of two frames in one write", 12)
		c.expectAnswer("the second of two frames in one write", 13)
	})

	check(k, e, "bad-frames-answered", func(k *testkit.T, e *env) {
		c := e.dial("client")
		malformed := proto.Error{Value: proto.MsgMalformed}
		cases := []struct {
			body, what string
			want       proto.Message
		}{
			{`{"payload":{"request_id":1}`, "JSON cut short", malformed},
			{`{"payload":{"request_id":1},"type_id":119} trailing`, "garbage after the object", malformed},
			{`[119,{}]`, "an array", malformed},
			{``, "an empty frame", malformed},
			{`{"payload":{"request_id":1}}`, "no type_id", malformed},
			{`{"payload":{"request_id":1},"type_id":"119"}`, "type_id as a string", malformed},
			{`{"payload":{"request_id":1},"type_id":4242}`, "type 4242", proto.Error{Value: proto.MsgUnknownType}},
			{`{"payload":{"request_id":5,"name":"x"},"type_id":115}`, "a login without a password",
				proto.ErrorResponse{RequestID: 5, Value: proto.MsgMalformed}},
			{`{"payload":{"request_id":"6"},"type_id":119}`, "request_id as a string", malformed},
			{`{"payload":{"content":5},"type_id":104}`, "content as a number", malformed},
			{`{"payload":{"channel_id":1,"content":"x","user_id":1},"type_id":103}`, "a server-to-client type (103)",
				proto.Error{Value: proto.MsgUnexpectedType}},
		}
		for _, tc := range cases {
			c.write(body(tc.body), tc.what+": "+tc.body)
			c.expect("a frame the server cannot handle gets an answer (the original said nothing, and a client "+
				"waiting for a reply waited for ever): "+tc.what, tc.want)
		}
		c.expectAnswer("after the bad frames the connection still works", c.sendGetChannels())
	})

	check(k, e, "one-mebibyte-accepted", func(k *testkit.T, e *env) {
		c := e.dial("client")
		b := `{"payload":{"request_id":21},"type_id":119}`
		b += strings.Repeat(" ", proto.MaxFrame-len(b)) // JSON allows trailing white space
		c.write(body(b), "a frame of exactly 1 MiB")
		c.expectAnswer("a frame of exactly 1 MiB is accepted (the limit is inclusive)", 21)
	})

	check(k, e, "oversized-frame-closed", func(k *testkit.T, e *env) {
		bystander := e.dial("bystander")
		c := e.dial("client")
		hdr := binary.BigEndian.AppendUint32(nil, proto.MaxFrame+1)
		c.write(append(hdr, `{"payload":`...), "a header announcing 1 MiB + 1 byte")
		c.expect("a frame over 1 MiB gets a notice", proto.Error{Value: proto.MsgFrameTooLarge})
		c.expectClosed("and then the connection is closed (the rest cannot be skipped without reading it)", testkit.IOTimeout)
		bystander.expectAnswer("another client is not affected", bystander.sendGetChannels())
	})

	check(k, e, "tls", func(k *testkit.T, e *env) {
		te := start(k, impl, Config{TLS: serverTLS(k)})
		c := te.dial("tls client")
		c.expectAnswer("a request over TLS", c.sendGetChannels())
		plain := te.dialTLS("plain client", nil)
		plain.write(body(`{"payload":{"request_id":1},"type_id":119}`), "a plain-text frame to a TLS server")
		plain.expectClosed("a client that does not speak TLS is closed", testkit.IOTimeout)
		c.expectAnswer("the TLS client is not affected", c.sendGetChannels())
	})

	check(k, e, "accept-failure-ends-serve", func(k *testkit.T, _ *env) {
		srv, err := impl.NewServer(Config{DBPath: filepath.Join(k.TempDir(), "chat.db"), Logger: testkit.Logger()})
		if err != nil {
			k.Fatalf("NewServer: %v", err)
		}
		k.CheckAcceptFailureEndsServe(srv)
	})
}

// serverTLS makes a self-signed certificate for 127.0.0.1.
func serverTLS(k *testkit.T) *tls.Config {
	k.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		k.Fatalf("test bug: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "serverlab test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		k.Fatalf("test bug: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}
