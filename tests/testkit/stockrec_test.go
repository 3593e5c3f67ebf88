package testkit

import (
	"strings"
	"testing"

	"serverlab/tools/given/stockproto"
)

func TestRecordText(t *testing.T) {
	good := stockproto.AppendRecord(nil, stockproto.BuyOK)
	if text, err := RecordText(good); err != nil || text != stockproto.BuyOK {
		t.Errorf("RecordText(a padded %q) = %q, %v", stockproto.BuyOK, text, err)
	}
	twoInOne := append([]byte(nil), good...)
	copy(twoInOne[100:], stockproto.SellOK) // a second reply packed after the NULs
	if _, err := RecordText(twoInOne); err == nil || !strings.Contains(err.Error(), "padding must be all NUL") {
		t.Errorf("RecordText of a record with bytes after its NULs: %v; want the padding error", err)
	}
	full := []byte(strings.Repeat("x", stockproto.RecordSize))
	if _, err := RecordText(full); err == nil || !strings.Contains(err.Error(), "no NUL") {
		t.Errorf("RecordText of a record without a NUL: %v; want an error", err)
	}
}
