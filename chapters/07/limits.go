package chatcore

import (
	"time"

	"serverlab/tools/given/chatcore/guard"
	"serverlab/tools/given/chatcore/proto"
)

// validName reports whether name may be a user or channel name: 1 to max
// bytes of UTF-8, each rune a letter, mark, digit, punctuation or symbol
// (Unicode categories L, M, N, P, S). That leaves out what hurts whoever
// displays a name: NUL and the other control characters (ESC starts the
// terminal's escape sequences), the format characters (category Cf: the
// bidi overrides U+202A–U+202E and U+2066–U+2069, the zero-width U+200B–
// U+200D and U+FEFF) and every kind of space (the client splits its
// commands on spaces, so such a name could not be typed). IRC daemons and
// NATS (subjects) draw the line at the same place: printable, no spaces.
// Names that merely look alike (a Cyrillic "а" for a Latin "a") pass: telling
// them apart needs Unicode's confusables tables, which is more than a chat
// server of this size should carry.
func validName(name string, max int) bool {
	// TODO(ex 7.2): Done when: a name is accepted only if it is not empty,
	// is at most max bytes, is valid UTF-8 and every rune of it is a letter,
	// mark, number, punctuation or symbol (Unicode categories L, M, N, P, S):
	// no control character, space, format character or invalid byte. Checked
	// by TestEx7_2_Users (user-names) and TestEx7_3_Channels (channel-names).
	return true
}

// admit checks a request against the server's limits before its handler
// runs, and answers the requests it refuses (it returns false for them):
//   - a user or channel name that validName rejects: Invalid name.;
//   - a chat message longer than MaxMessage bytes, or whose JSON would not
//     fit alone in a GetChats reply: 101 Message too long.;
//   - a chat message past its user's budget of chat bytes (ChatBurst at
//     once, ChatRate a second; guard.ChatBudget): 101 Too many messages,
//     try again later.;
//   - a chat message that would take the store past MaxStoreBytes: 101
//     Message not stored. (storeBudget);
//   - a GetUsers with more than MaxUserIDs ids: Too many user ids.
//
// Each limit bounds what a request can make the server hold, store or send
// (docs/chatcore.md, "Limits", has the figures).
func (s *Server) admit(c *conn, m proto.Message) bool {
	switch m := m.(type) {
	case proto.CreateUserRequest:
		if !validName(m.Name, s.cfg.Limits.MaxUserName) {
			s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgInvalidName})
			return false
		}
	case proto.CreateChannelRequest:
		if !validName(m.Name, s.cfg.Limits.MaxChannelName) {
			s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgInvalidName})
			return false
		}
	case proto.WriteChat:
		if len(m.Content) > s.cfg.Limits.MaxMessage || chatItemOverhead+guard.JSONLen(m.Content) > replyRoom {
			s.reply(c, proto.Error{Value: proto.MsgMessageTooLong})
			return false
		}
		if s.session(c) != nil && s.storeBudget.full(len(m.Content)) {
			c.log.Warn("chat message refused: the store is full", "bytes", len(m.Content),
				"limit", s.cfg.Limits.MaxStoreBytes)
			s.reply(c, proto.Error{Value: errNotStored.Error()})
			return false
		}
		if u := s.session(c); u != nil && !s.chat.TakeChat(u.id, m.Content, time.Now()) {
			c.log.Warn("chat message over the user's budget", "user", u.id, "bytes", guard.ChatFrame(m.Content),
				"burst", s.cfg.Limits.ChatBurst, "per_second", s.cfg.Limits.ChatRate)
			s.reply(c, proto.Error{Value: proto.MsgTooManyMessages})
			return false
		}
	case proto.GetUsersRequest:
		if len(m.UserIDs) > s.cfg.Limits.MaxUserIDs {
			s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyIDs})
			return false
		}
	}
	return true
}

// itemOverhead is the JSON of one list item without its name: keys,
// punctuation, the largest id and the comma. replyRoom is what a list may
// take of a frame: the envelope and a response's other fields need the rest.
const (
	itemOverhead = len(`{"id":4294967295,"name":""},`)
	replyRoom    = proto.MaxFrame - 200
)

// itemCost is the most bytes a User or ChatChannel with this name takes in
// a list.
func itemCost(name string) int { return itemOverhead + guard.JSONLen(name) }
