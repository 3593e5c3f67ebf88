package chatcoreload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"serverlab/tools/given/chatcore/proto"
)

func TestChatOfReadsTheEncodersFrames(t *testing.T) {
	for _, m := range []proto.ReceiveChat{
		{ChannelID: 7, Content: "12", UserID: 3},
		{ChannelID: 4294967295, Content: "", UserID: 0},
		{ChannelID: 1, Content: "hello, world", UserID: 99},
	} {
		b, err := proto.Encode(m)
		require.NoError(t, err)
		ch, content, ok := chatOf(b[4:]) // the body, after the length
		require.True(t, ok, "chatOf(%q)", b[4:])
		assert.Equal(t, m.ChannelID, ch)
		assert.Equal(t, m.Content, string(content))
	}
	escaped, err := proto.Encode(proto.ReceiveChat{ChannelID: 1, Content: `a"b`})
	require.NoError(t, err)
	_, _, ok := chatOf(escaped[4:])
	assert.False(t, ok, "a content with an escape is the decoder's")
	other, err := proto.Encode(proto.WriteChat{Content: "5"})
	require.NoError(t, err)
	_, _, ok = chatOf(other[4:])
	assert.False(t, ok, "a 104 is not a 103")
}

func TestCheckOrder(t *testing.T) {
	ok := checkOrder([][]string{{"1", "2", "3"}, {"1", "2"}, {"1", "2", "3"}})
	assert.True(t, ok.OK(), "%v", ok)
	assert.Equal(t, 1, ok.InFlight)
	assert.Equal(t, 3, ok.Messages)

	gap := checkOrder([][]string{{"1", "2", "3"}, {"1", "3"}})
	assert.False(t, gap.OK())
	assert.Equal(t, 1, gap.Departed)
	assert.Contains(t, gap.First, `tester 1 received "3" where the longest list has "2"`)

	order := checkOrder([][]string{{"1", "2", "3"}, {"2", "1", "3"}})
	assert.Equal(t, 1, order.Departed)

	twice := checkOrder([][]string{{"1", "2", "2", "3"}, {"1", "2", "2"}})
	assert.Equal(t, 2, twice.Duplicated)
	assert.Contains(t, twice.First, `received "2" twice`)
}
