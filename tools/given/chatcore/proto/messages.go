package proto

// Type is a message's type_id.
type Type uint64

// The message types of chatcore's protocol (the final numbering, 99–129), and
// the course's two additions above 129.
const (
	TypePrint                 Type = 99  // S→C, never sent by the server
	TypeErrorResponse         Type = 100 // S→C: the error answer of every request with a request_id
	TypeError                 Type = 101 // S→C: an error without a request to pair it with
	TypeShutdown              Type = 102 // C→S: stop the server (the course: administrators only)
	TypeReceiveChat           Type = 103 // S→C: a chat message in the joined channel
	TypeWriteChat             Type = 104 // C→S: say something in the joined channel
	TypeGetChatsRequest       Type = 105
	TypeGetChatsResponse      Type = 106
	TypeCreateChannelRequest  Type = 107
	TypeCreateChannelResponse Type = 108
	TypeCreateUserRequest     Type = 109
	TypeCreateUserResponse    Type = 110
	TypeGetUsersRequest       Type = 111
	TypeGetUsersResponse      Type = 112
	TypeGetUserRequest        Type = 113
	TypeGetUserResponse       Type = 114
	TypeAuthenticateRequest   Type = 115
	TypeAuthenticateResponse  Type = 116
	TypeJoinChannelRequest    Type = 117
	TypeJoinChannelResponse   Type = 118
	TypeGetChannelsRequest    Type = 119
	TypeGetChannelsResponse   Type = 120
	TypeGetChannelRequest     Type = 121
	TypeGetChannelResponse    Type = 122
	TypeLogoutRequest         Type = 123
	TypeLogoutResponse        Type = 124
	TypeUserLogoutEvent       Type = 125
	TypeUserLoginEvent        Type = 126
	TypeChannelLeaveEvent     Type = 127
	TypeChannelJoinEvent      Type = 128
	TypeChannelCreateEvent    Type = 129
	TypeHeartbeatRequest      Type = 130 // C→S, the course's addition: "I am alive"
	TypeHeartbeatResponse     Type = 131 // S→C, the course's addition: the answer to 130
)

// Message is one decoded payload. Every type of the protocol is a struct in
// this file whose fields are the payload's keys, declared in alphabetical
// order: encoding/json writes fields in declaration order, and the original
// (nlohmann::json) writes keys sorted, so the bytes come out the same.
type Message interface {
	Type() Type
}

// Requester is a message that carries a request_id: every request of an RPC
// pair, and every response, which copies it.
type Requester interface {
	Message
	Request() uint64
}

// User, Channel and ChatMessage are the shared sub-objects.
type (
	User struct {
		ID   uint32 `json:"id"`
		Name string `json:"name"`
	}
	Channel struct {
		ID   uint32 `json:"id"`
		Name string `json:"name"`
	}
	// ChatMessage is one item of a history (106). It has no channel_id: the
	// response's own channel_id says which channel, as in the original.
	ChatMessage struct {
		Content string `json:"content"`
		ID      uint32 `json:"id"`
		UserID  uint32 `json:"user_id"`
	}
)

// The messages, by type id.
type (
	Print struct {
		Value string `json:"value"`
	}
	ErrorResponse struct {
		RequestID uint64 `json:"request_id"`
		Value     string `json:"value"`
	}
	Error struct {
		Value string `json:"value"`
	}
	// Shutdown's payload is ignored: the original accepts any JSON value.
	Shutdown    struct{}
	ReceiveChat struct {
		ChannelID uint32 `json:"channel_id"`
		Content   string `json:"content"`
		UserID    uint32 `json:"user_id"`
	}
	WriteChat struct {
		Content string `json:"content"`
	}
	GetChatsRequest struct {
		ChannelID uint32 `json:"channel_id"`
		Limit     uint32 `json:"limit"`
		RequestID uint64 `json:"request_id"`
	}
	GetChatsResponse struct {
		ChannelID uint32        `json:"channel_id"`
		Messages  []ChatMessage `json:"messages"`
		RequestID uint64        `json:"request_id"`
	}
	CreateChannelRequest struct {
		Name      string `json:"name"`
		RequestID uint64 `json:"request_id"`
	}
	CreateChannelResponse struct {
		Channel   Channel `json:"channel"`
		RequestID uint64  `json:"request_id"`
	}
	CreateUserRequest struct {
		Name      string `json:"name"`
		Password  string `json:"password"`
		RequestID uint64 `json:"request_id"`
	}
	CreateUserResponse struct {
		RequestID uint64 `json:"request_id"`
		User      User   `json:"user"`
	}
	GetUsersRequest struct {
		RequestID uint64   `json:"request_id"`
		UserIDs   []uint32 `json:"user_ids"`
	}
	GetUsersResponse struct {
		RequestID uint64 `json:"request_id"`
		Users     []User `json:"users"`
	}
	GetUserRequest struct {
		Name      string `json:"name"`
		RequestID uint64 `json:"request_id"`
	}
	GetUserResponse struct {
		RequestID uint64 `json:"request_id"`
		User      User   `json:"user"`
	}
	AuthenticateRequest struct {
		Name      string `json:"name"`
		Password  string `json:"password"`
		RequestID uint64 `json:"request_id"`
	}
	AuthenticateResponse struct {
		RequestID uint64 `json:"request_id"`
		User      User   `json:"user"`
	}
	JoinChannelRequest struct {
		ChannelID uint32 `json:"channel_id"`
		RequestID uint64 `json:"request_id"`
	}
	JoinChannelResponse struct {
		ChannelID uint32 `json:"channel_id"`
		RequestID uint64 `json:"request_id"`
	}
	GetChannelsRequest struct {
		RequestID uint64 `json:"request_id"`
	}
	GetChannelsResponse struct {
		Channels  []Channel `json:"channels"`
		RequestID uint64    `json:"request_id"`
	}
	GetChannelRequest struct {
		ChannelID uint32 `json:"channel_id"`
		RequestID uint64 `json:"request_id"`
	}
	GetChannelResponse struct {
		Channel   Channel `json:"channel"`
		RequestID uint64  `json:"request_id"`
	}
	LogoutRequest struct {
		RequestID uint64 `json:"request_id"`
	}
	LogoutResponse struct {
		RequestID uint64 `json:"request_id"`
	}
	UserLogoutEvent struct {
		UserID uint32 `json:"user_id"`
	}
	UserLoginEvent struct {
		UserID uint32 `json:"user_id"`
	}
	ChannelLeaveEvent struct {
		ChannelID uint32 `json:"channel_id"`
		UserID    uint32 `json:"user_id"`
	}
	ChannelJoinEvent struct {
		ChannelID uint32 `json:"channel_id"`
		UserID    uint32 `json:"user_id"`
	}
	ChannelCreateEvent struct {
		Channel Channel `json:"channel"`
		UserID  uint32  `json:"user_id"`
	}
	// HeartbeatRequest is the course's addition (type 130): a client that
	// sends it promises to send a frame at least every idle timeout, and the
	// server may then log it out when it falls silent. The original's clients
	// never send it and are not held to that promise.
	HeartbeatRequest struct {
		RequestID uint64 `json:"request_id"`
	}
	// HeartbeatResponse (type 131) answers a HeartbeatRequest.
	HeartbeatResponse struct {
		RequestID uint64 `json:"request_id"`
	}
)

func (Print) Type() Type                 { return TypePrint }
func (ErrorResponse) Type() Type         { return TypeErrorResponse }
func (Error) Type() Type                 { return TypeError }
func (Shutdown) Type() Type              { return TypeShutdown }
func (ReceiveChat) Type() Type           { return TypeReceiveChat }
func (WriteChat) Type() Type             { return TypeWriteChat }
func (GetChatsRequest) Type() Type       { return TypeGetChatsRequest }
func (GetChatsResponse) Type() Type      { return TypeGetChatsResponse }
func (CreateChannelRequest) Type() Type  { return TypeCreateChannelRequest }
func (CreateChannelResponse) Type() Type { return TypeCreateChannelResponse }
func (CreateUserRequest) Type() Type     { return TypeCreateUserRequest }
func (CreateUserResponse) Type() Type    { return TypeCreateUserResponse }
func (GetUsersRequest) Type() Type       { return TypeGetUsersRequest }
func (GetUsersResponse) Type() Type      { return TypeGetUsersResponse }
func (GetUserRequest) Type() Type        { return TypeGetUserRequest }
func (GetUserResponse) Type() Type       { return TypeGetUserResponse }
func (AuthenticateRequest) Type() Type   { return TypeAuthenticateRequest }
func (AuthenticateResponse) Type() Type  { return TypeAuthenticateResponse }
func (JoinChannelRequest) Type() Type    { return TypeJoinChannelRequest }
func (JoinChannelResponse) Type() Type   { return TypeJoinChannelResponse }
func (GetChannelsRequest) Type() Type    { return TypeGetChannelsRequest }
func (GetChannelsResponse) Type() Type   { return TypeGetChannelsResponse }
func (GetChannelRequest) Type() Type     { return TypeGetChannelRequest }
func (GetChannelResponse) Type() Type    { return TypeGetChannelResponse }
func (LogoutRequest) Type() Type         { return TypeLogoutRequest }
func (LogoutResponse) Type() Type        { return TypeLogoutResponse }
func (UserLogoutEvent) Type() Type       { return TypeUserLogoutEvent }
func (UserLoginEvent) Type() Type        { return TypeUserLoginEvent }
func (ChannelLeaveEvent) Type() Type     { return TypeChannelLeaveEvent }
func (ChannelJoinEvent) Type() Type      { return TypeChannelJoinEvent }
func (ChannelCreateEvent) Type() Type    { return TypeChannelCreateEvent }
func (HeartbeatRequest) Type() Type      { return TypeHeartbeatRequest }
func (HeartbeatResponse) Type() Type     { return TypeHeartbeatResponse }

func (m ErrorResponse) Request() uint64         { return m.RequestID }
func (m GetChatsRequest) Request() uint64       { return m.RequestID }
func (m GetChatsResponse) Request() uint64      { return m.RequestID }
func (m CreateChannelRequest) Request() uint64  { return m.RequestID }
func (m CreateChannelResponse) Request() uint64 { return m.RequestID }
func (m CreateUserRequest) Request() uint64     { return m.RequestID }
func (m CreateUserResponse) Request() uint64    { return m.RequestID }
func (m GetUsersRequest) Request() uint64       { return m.RequestID }
func (m GetUsersResponse) Request() uint64      { return m.RequestID }
func (m GetUserRequest) Request() uint64        { return m.RequestID }
func (m GetUserResponse) Request() uint64       { return m.RequestID }
func (m AuthenticateRequest) Request() uint64   { return m.RequestID }
func (m AuthenticateResponse) Request() uint64  { return m.RequestID }
func (m JoinChannelRequest) Request() uint64    { return m.RequestID }
func (m JoinChannelResponse) Request() uint64   { return m.RequestID }
func (m GetChannelsRequest) Request() uint64    { return m.RequestID }
func (m GetChannelsResponse) Request() uint64   { return m.RequestID }
func (m GetChannelRequest) Request() uint64     { return m.RequestID }
func (m GetChannelResponse) Request() uint64    { return m.RequestID }
func (m LogoutRequest) Request() uint64         { return m.RequestID }
func (m LogoutResponse) Request() uint64        { return m.RequestID }
func (m HeartbeatRequest) Request() uint64      { return m.RequestID }
func (m HeartbeatResponse) Request() uint64     { return m.RequestID }

// ResponseType is the success reply of each request type, as the original's
// RPC pairs declare them; every request's error reply is TypeErrorResponse.
var ResponseType = map[Type]Type{
	TypeGetChatsRequest:      TypeGetChatsResponse,
	TypeCreateChannelRequest: TypeCreateChannelResponse,
	TypeCreateUserRequest:    TypeCreateUserResponse,
	TypeGetUsersRequest:      TypeGetUsersResponse,
	TypeGetUserRequest:       TypeGetUserResponse,
	TypeAuthenticateRequest:  TypeAuthenticateResponse,
	TypeJoinChannelRequest:   TypeJoinChannelResponse,
	TypeGetChannelsRequest:   TypeGetChannelsResponse,
	TypeGetChannelRequest:    TypeGetChannelResponse,
	TypeLogoutRequest:        TypeLogoutResponse,
	TypeHeartbeatRequest:     TypeHeartbeatResponse,
}

// The error strings the original server sends, verbatim (some end with a
// period, some do not), and the course's additions. Clients match on them.
const (
	MsgNotAuthorized   = "Not authorized."
	MsgUserExists      = "User already exists."
	MsgAlreadyLoggedIn = "Already logged in."
	MsgWrongPassword   = "Wrong username or password"
	MsgChannelNotFound = "Channel not found."
	MsgCreateChannel   = "Unable to create channel."
	MsgUserNotFound    = "User not found."
	MsgNoChannel       = "No channel joined."

	// The course's additions: answers where the original was silent or
	// did something harmful.
	MsgMalformed      = "Malformed message."
	MsgUnknownType    = "Unknown message type."
	MsgUnexpectedType = "Unexpected message type."
	MsgFrameTooLarge  = "Frame too large."
	MsgNotAllowed     = "Not allowed."
	MsgShuttingDown   = "Server shutting down."
	MsgServerBusy     = "Server busy."
	// MsgTooManyFromAddr refuses a connection past the server's cap on
	// connections from one address (chatcore-server -max-conns-per-address).
	MsgTooManyFromAddr = "Too many connections from your address."

	// The course's limits (docs/chatcore.md, "Limits"): a request that
	// passes one is refused with one of these, never dropped in silence.
	MsgInvalidName     = "Invalid name."
	MsgMessageTooLong  = "Message too long."
	MsgTooManyChannels = "Too many channels."
	MsgTooManyIDs      = "Too many user ids."
	MsgReplyTooLarge   = "Reply too large."
	MsgTooManyFailures = "Too many failed logins, try again later."
	// MsgTooManyRegistrations: the client's address registered as many users
	// lately as the server allows one address.
	MsgTooManyRegistrations = "Too many registrations from your address, try again later."
	MsgStorageFailed        = "Storage failed."
	// MsgTooManyMessages: the user wrote more chat bytes lately than the
	// server lets one user write (guard.ChatBudget).
	MsgTooManyMessages = "Too many messages, try again later."
)

// MsgUserLoggedIn is the answer to a login of a user who has a session on
// another connection: "<name> is already logged in."
func MsgUserLoggedIn(name string) string { return name + " is already logged in." }

// MsgNoSuchUser is GetUser's answer for an unknown name:
// "User with name <name> not found" (no final period, as in the original).
func MsgNoSuchUser(name string) string { return "User with name " + name + " not found" }
