package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// HistoryOnJoin is how many messages the client shows when it joins a
// channel, as the original's client does.
const HistoryOnJoin = 20

// rpcTimeout is the original client's limit on every request.
const rpcTimeout = 5 * time.Second

// session is the client's state: one connection at a time, the logged-in
// user, the joined channel, and caches of names. It writes everything it has
// to say through out, one line at a time, so that the line mode and a
// terminal UI can share it.
type session struct {
	out func(line string)

	mu       sync.Mutex
	nc       net.Conn
	done     chan struct{} // closed when the reader of nc returns
	nextID   uint64
	waiting  map[uint64]chan proto.Message
	me       proto.User // ID 0: not logged in
	channel  proto.Channel
	users    map[uint32]string
	channels map[uint32]string
}

func newSession(out func(string)) *session {
	return &session{out: out, users: map[uint32]string{}, channels: map[uint32]string{}}
}

var errNotConnected = errors.New("not connected: /connect <address> <port> first")

// command runs one input line: a /command, or a chat message.
func (s *session) command(line string) (quit bool) {
	if !strings.HasPrefix(line, "/") {
		if line != "" {
			s.report(s.send(proto.WriteChat{Content: line}))
		}
		return false
	}
	args := strings.Split(line[1:], " ") // single spaces, as the original
	switch cmd, args := args[0], args[1:]; cmd {
	case "connect":
		if len(args) < 2 {
			s.out("connect requires 2 arguments <address> <port>")
			return false
		}
		s.report(s.connect(net.JoinHostPort(args[0], args[1])))
	case "adduser":
		if len(args) < 2 {
			s.out("adduser requires 2 arguments <user_name> <password>")
			return false
		}
		s.report(s.addUser(args[0], args[1]))
	case "login":
		if len(args) < 2 {
			s.out("login requires 2 arguments <user_name> <password>")
			return false
		}
		s.report(s.login(args[0], args[1]))
	case "logout":
		s.report(s.logout())
	case "addchannel":
		if len(args) < 1 {
			s.out("addchannel requires 1 argument <channel_name>")
			return false
		}
		s.report(s.addChannel(strings.Join(args, " ")))
	case "channels":
		s.report(s.listChannels())
	case "join":
		id, err := strconv.ParseUint(strings.Join(args, ""), 10, 32)
		if err != nil {
			s.out("invalid <channel_id>")
			return false
		}
		s.report(s.join(uint32(id)))
	case "shutdown":
		s.report(s.shutdown())
	case "help":
		s.out(help)
	case "exit":
		return true
	default:
		s.out("unknown command: " + cmd)
	}
	return false
}

const help = `commands:
  /connect <address> <port>     connect to a server
  /adduser <user_name> <password>
  /login <user_name> <password>
  /logout
  /addchannel <channel_name>
  /channels                     list the channels
  /join <channel_id>            join a channel and show its latest messages
  /shutdown                     stop the server (102; administrators only: -admins)
  /help
  /exit
anything else is a chat message to the joined channel`

func (s *session) report(err error) {
	if err != nil {
		s.out("error: " + err.Error())
	}
}

// connect replaces the connection, if any, with one to addr.
func (s *session) connect(addr string) error {
	nc, err := net.DialTimeout("tcp", addr, rpcTimeout)
	if err != nil {
		return err
	}
	s.close()
	s.mu.Lock()
	s.nc, s.done, s.waiting = nc, make(chan struct{}), map[uint64]chan proto.Message{}
	s.me, s.channel = proto.User{}, proto.Channel{}
	done := s.done
	s.mu.Unlock()
	go s.readLoop(nc, done)
	s.out("connected to " + addr)
	return nil
}

// close ends the connection and waits for its reader.
func (s *session) close() {
	s.mu.Lock()
	nc, done := s.nc, s.done
	s.nc = nil
	s.mu.Unlock()
	if nc != nil {
		nc.Close()
		<-done
	}
}

func (s *session) send(m proto.Message) error {
	s.mu.Lock()
	nc := s.nc
	s.mu.Unlock()
	if nc == nil {
		return errNotConnected
	}
	nc.SetWriteDeadline(time.Now().Add(rpcTimeout))
	return proto.Write(nc, m)
}

// call sends the request mk makes with a fresh id and waits for its answer;
// a 100 becomes an error with the server's text.
func (s *session) call(mk func(id uint64) proto.Requester) (proto.Message, error) {
	s.mu.Lock()
	if s.nc == nil {
		s.mu.Unlock()
		return nil, errNotConnected
	}
	s.nextID++
	id, ch, done := s.nextID, make(chan proto.Message, 1), s.done
	s.waiting[id] = ch
	s.mu.Unlock()
	if err := s.send(mk(id)); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if e, ok := m.(proto.ErrorResponse); ok {
			return nil, errors.New(e.Value)
		}
		return m, nil
	case <-done:
		return nil, errors.New("connection closed")
	case <-time.After(rpcTimeout):
		return nil, fmt.Errorf("no answer within %v", rpcTimeout)
	}
}

// readLoop routes answers to their callers and prints chat messages and
// events as they come.
func (s *session) readLoop(nc net.Conn, done chan struct{}) {
	defer close(done)
	r := bufio.NewReader(nc)
	for {
		m, err := proto.Read(r)
		if errors.Is(err, proto.ErrMalformed) || errors.Is(err, proto.ErrUnknownType) {
			continue
		}
		if err != nil {
			s.out("disconnected")
			return
		}
		if rq, ok := m.(proto.Requester); ok {
			s.mu.Lock()
			if a, ok := m.(proto.AuthenticateResponse); ok {
				// Before the 126 that follows it is shown: that one is ours.
				s.me = a.User
				s.users[a.User.ID] = a.User.Name
			}
			ch := s.waiting[rq.Request()]
			delete(s.waiting, rq.Request())
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		s.show(m)
	}
}

// show prints a message the server pushed. Events about oneself are not
// shown (the answer to one's own request said it already).
func (s *session) show(m proto.Message) {
	s.mu.Lock()
	me := s.me.ID
	s.mu.Unlock()
	switch m := m.(type) {
	case proto.ReceiveChat:
		if m.UserID == me {
			s.out("[You] " + m.Content)
		} else {
			s.withName(m.UserID, func(name string) { s.out("[User::" + name + "] " + m.Content) })
		}
	case proto.Error:
		s.out("server: " + m.Value)
	case proto.UserLoginEvent:
		if m.UserID != me {
			s.withName(m.UserID, func(name string) { s.out("* " + name + " logged in") })
		}
	case proto.UserLogoutEvent:
		if m.UserID != me {
			s.withName(m.UserID, func(name string) { s.out("* " + name + " logged out") })
		}
	case proto.ChannelJoinEvent:
		if m.UserID != me {
			s.withName(m.UserID, func(name string) { s.out("* " + name + " joined " + s.channelName(m.ChannelID)) })
		}
	case proto.ChannelLeaveEvent:
		if m.UserID != me {
			s.withName(m.UserID, func(name string) { s.out("* " + name + " left " + s.channelName(m.ChannelID)) })
		}
	case proto.ChannelCreateEvent:
		s.mu.Lock()
		s.channels[m.Channel.ID] = m.Channel.Name
		s.mu.Unlock()
		if m.UserID != me {
			s.out(fmt.Sprintf("* %s created channel %s (id %d)", s.userName(m.UserID), m.Channel.Name, m.Channel.ID))
		}
	}
}

// withName calls f with the name of user id: at once if it is known, else
// after asking the server (111) on another goroutine, since the reader that
// calls it must not wait for an answer it would have to read itself.
func (s *session) withName(id uint32, f func(name string)) {
	s.mu.Lock()
	name, ok := s.users[id]
	s.mu.Unlock()
	if ok {
		f(name)
		return
	}
	go func() {
		s.learnUsers([]proto.ChatMessage{{UserID: id}})
		f(s.userName(id))
	}()
}

// chatLine formats a chat message: [You] for one's own, [User::<name>] for
// others', as the original's client.
func (s *session) chatLine(user uint32, content string) string {
	s.mu.Lock()
	mine := user == s.me.ID
	s.mu.Unlock()
	if mine {
		return "[You] " + content
	}
	return "[User::" + s.userName(user) + "] " + content
}

// userName is the cached name of a user, or "#<id>" until it is known.
func (s *session) userName(id uint32) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.users[id]; ok {
		return n
	}
	return "#" + strconv.FormatUint(uint64(id), 10)
}

func (s *session) channelName(id uint32) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.channels[id]; ok {
		return n
	}
	return "#" + strconv.FormatUint(uint64(id), 10)
}

func (s *session) addUser(name, password string) error {
	m, err := s.call(func(id uint64) proto.Requester {
		return proto.CreateUserRequest{RequestID: id, Name: name, Password: password}
	})
	if err != nil {
		return err
	}
	u := m.(proto.CreateUserResponse).User
	s.out(fmt.Sprintf("user %s created (id %d)", u.Name, u.ID))
	return nil
}

func (s *session) login(name, password string) error {
	m, err := s.call(func(id uint64) proto.Requester {
		return proto.AuthenticateRequest{RequestID: id, Name: name, Password: password}
	})
	if err != nil {
		return err
	}
	u := m.(proto.AuthenticateResponse).User
	s.mu.Lock()
	s.me = u
	s.users[u.ID] = u.Name
	s.mu.Unlock()
	s.out("logged in as " + u.Name)
	return nil
}

func (s *session) logout() error {
	if _, err := s.call(func(id uint64) proto.Requester { return proto.LogoutRequest{RequestID: id} }); err != nil {
		return err
	}
	s.mu.Lock()
	s.me, s.channel = proto.User{}, proto.Channel{}
	s.mu.Unlock()
	s.out("logged out")
	return nil
}

// shutdown sends 102. It has no request id and no answer of its own: an
// administrator's server ends every connection with "Server shutting
// down.", anyone else gets "Not allowed." (both are shown as they come).
func (s *session) shutdown() error {
	if err := s.send(proto.Shutdown{}); err != nil {
		return err
	}
	s.out("shutdown sent")
	return nil
}

func (s *session) addChannel(name string) error {
	m, err := s.call(func(id uint64) proto.Requester { return proto.CreateChannelRequest{RequestID: id, Name: name} })
	if err != nil {
		return err
	}
	ch := m.(proto.CreateChannelResponse).Channel
	s.mu.Lock()
	s.channels[ch.ID] = ch.Name
	s.mu.Unlock()
	s.out(fmt.Sprintf("channel %s (id %d)", ch.Name, ch.ID))
	return nil
}

func (s *session) listChannels() error {
	m, err := s.call(func(id uint64) proto.Requester { return proto.GetChannelsRequest{RequestID: id} })
	if err != nil {
		return err
	}
	chs := m.(proto.GetChannelsResponse).Channels
	s.out(fmt.Sprintf("%d channels:", len(chs)))
	s.mu.Lock()
	for _, ch := range chs {
		s.channels[ch.ID] = ch.Name
	}
	s.mu.Unlock()
	for _, ch := range chs {
		s.out(fmt.Sprintf("  %d %s", ch.ID, ch.Name))
	}
	return nil
}

// join joins a channel, then shows its latest messages with their authors'
// names, as the original's client: 117, 121 if the channel is not cached,
// 105 with limit 20, 111 for the authors it does not know.
func (s *session) join(channel uint32) error {
	if _, err := s.call(func(id uint64) proto.Requester {
		return proto.JoinChannelRequest{RequestID: id, ChannelID: channel}
	}); err != nil {
		return err
	}
	name := s.channelName(channel)
	if strings.HasPrefix(name, "#") {
		if m, err := s.call(func(id uint64) proto.Requester {
			return proto.GetChannelRequest{RequestID: id, ChannelID: channel}
		}); err == nil {
			name = m.(proto.GetChannelResponse).Channel.Name
		}
	}
	s.mu.Lock()
	s.channels[channel] = name
	s.channel = proto.Channel{ID: channel, Name: name}
	s.mu.Unlock()
	s.out("joined " + name)
	m, err := s.call(func(id uint64) proto.Requester {
		return proto.GetChatsRequest{RequestID: id, ChannelID: channel, Limit: HistoryOnJoin}
	})
	if err != nil {
		return err
	}
	msgs := m.(proto.GetChatsResponse).Messages
	s.learnUsers(msgs)
	for _, msg := range msgs {
		s.out(s.chatLine(msg.UserID, msg.Content))
	}
	return nil
}

// learnUsers fetches the names of the authors of msgs it does not know.
func (s *session) learnUsers(msgs []proto.ChatMessage) {
	var unknown []uint32
	s.mu.Lock()
	for _, m := range msgs {
		if _, ok := s.users[m.UserID]; !ok && !slices.Contains(unknown, m.UserID) {
			unknown = append(unknown, m.UserID)
		}
	}
	s.mu.Unlock()
	if len(unknown) == 0 {
		return
	}
	slices.SortFunc(unknown, cmp.Compare)
	m, err := s.call(func(id uint64) proto.Requester { return proto.GetUsersRequest{RequestID: id, UserIDs: unknown} })
	if err != nil {
		return
	}
	s.mu.Lock()
	for _, u := range m.(proto.GetUsersResponse).Users {
		s.users[u.ID] = u.Name
	}
	s.mu.Unlock()
}

// prompt is the original's: chat::<channel>> after joining, chat> before.
func (s *session) prompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.channel.ID != 0 {
		return "chat::" + s.channel.Name + "> "
	}
	return "chat> "
}
