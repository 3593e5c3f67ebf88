// Package chatscale is the chapter 08 server: chatcore past one machine.
// Several of these servers speak chapter 07's protocol, unchanged, to their
// own clients, and share everything else through NATS JetStream:
//
//   - chat messages are published to a stream, one subject per channel
//     (chat.msg.<channel id>), each with a message id that the stream uses
//     to drop a retried copy; a message is stored once the stream has
//     acknowledged it, and its sequence number in the stream is its id;
//   - every server reads the stream with one consumer of its own and
//     delivers each message to its own members of the channel, the sender's
//     echo included: every server shows a channel in the stream's one order,
//     and an echo still means "stored";
//   - history is read from the stream, so every server serves the same;
//   - users, channels and sessions are keys in key-value buckets, created
//     only if absent, so that a name is unique and a user logged in once
//     across all the servers;
//   - events (log in, log out, join, leave, a new channel) go over plain
//     subjects, best effort: the origin server delivers them to its own
//     connections directly and publishes them for the others.
//
// With no NATS URL the server embeds a one-node NATS with an in-process
// connection (no port), its store in a folder beside the database's path.
//
// Each connection has a reader goroutine, which runs its requests one at a
// time, and a writer goroutine, the only code that writes to its socket,
// fed by a bounded queue. The local state — connections, sessions and
// channel membership on this server, the cached users and channels — is
// under one mutex that is never held across I/O or a NATS call.
package chatscale
