package testkit

import (
	"bytes"
	"fmt"
	"io"

	"serverlab/tools/given/stockproto"
)

// Stock protocol helpers (tools/given/stockproto), shared by the stock suites of
// chapters 04 and 05: one reader of reply records, which always checks the
// NUL padding.

// TryReadRecord reads one stock reply record, exactly stockproto.RecordSize
// bytes, the way the original's clients do (Rio_readnb(MAXLINE)), and returns
// its text: the bytes before the first NUL. Everything after the text must be
// NUL. n says how many bytes of the record arrived: 0 at a clean end of
// stream, fewer than a record when it was cut.
func (c *Conn) TryReadRecord() (text string, n int, err error) {
	rec := make([]byte, stockproto.RecordSize)
	n, err = io.ReadFull(c.Reader(), rec)
	if err != nil {
		return "", n, fmt.Errorf("reading a %d-byte reply record: got %d bytes, then %s [%w]",
			stockproto.RecordSize, n, Describe(err), err)
	}
	text, err = RecordText(rec)
	return text, n, err
}

// RecordText checks the padding of a record and returns its text.
func RecordText(rec []byte) (string, error) {
	text, pad, found := bytes.Cut(rec, []byte{0})
	if !found {
		return "", fmt.Errorf("the %d-byte record has no NUL after its text (a C client could not find its end): "+
			"it starts %s", len(rec), Quote(rec[:min(len(rec), 80)]))
	}
	if i := bytes.IndexFunc(pad, func(r rune) bool { return r != 0 }); i >= 0 {
		return "", fmt.Errorf("record text %s is followed by NULs and then byte %d = %q: the padding must be "+
			"all NUL (were two replies packed into one record, or a reply not padded to %d bytes?)",
			Quote(text), len(text)+1+i, pad[i], stockproto.RecordSize)
	}
	return string(text), nil
}

// ExpectRecord reads one record and compares its text with want.
func (c *Conn) ExpectRecord(want string) {
	c.k.Helper()
	got, _, err := c.TryReadRecord()
	if err != nil {
		c.k.Fatalf("want reply %q: %v%s", want, err, c.Context())
	}
	if got != want {
		c.k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, c.Context())
	}
}
