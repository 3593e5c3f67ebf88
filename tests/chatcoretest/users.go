package chatcoretest

import (
	"strings"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/chatcore/proto"
)

// Users checks exercise 7.2: registering, logging in and out, looking users
// up, and how passwords are kept. A connection carries one user and a user
// is on one connection; events 126 and 125 go to every open connection; the
// database holds no password, only salted hashes (the original stored them
// in plain text); users survive a restart.
func Users(t *testing.T, impl Impl) {
	k := testkit.New(t, "7.2")
	e := start(k, impl, Config{})

	check(k, e, "create-user", func(k *testkit.T, e *env) {
		c := e.dial("client")
		u := c.register("carol")
		c.callExpect("a name that exists", proto.CreateUserRequest{RequestID: 9, Name: "carol", Password: "x"},
			proto.ErrorResponse{RequestID: 9, Value: proto.MsgUserExists})
		v := c.register("carol2")
		if v.ID == u.ID {
			k.Fatalf("two users got the same id %d", u.ID)
		}
	})

	check(k, e, "login-and-events", func(k *testkit.T, e *env) {
		watcher := e.dial("an unauthenticated watcher")
		watcher.settle()
		a := e.dial("alice")
		u := a.register("alice")
		a.callExpect("a wrong password", proto.AuthenticateRequest{RequestID: 2, Name: "alice", Password: "nope"},
			proto.ErrorResponse{RequestID: 2, Value: proto.MsgWrongPassword})
		a.callExpect("an unknown user", proto.AuthenticateRequest{RequestID: 3, Name: "nobody", Password: "x"},
			proto.ErrorResponse{RequestID: 3, Value: proto.MsgWrongPassword})
		a.send(proto.AuthenticateRequest{RequestID: 4, Name: "alice", Password: password("alice")})
		a.expect("a login: first the answer, then the login event to everyone, the new user included",
			proto.AuthenticateResponse{RequestID: 4, User: u}, proto.UserLoginEvent{UserID: u.ID})
		watcher.expect("a login is announced to every open connection, authenticated or not",
			proto.UserLoginEvent{UserID: u.ID})

		a.callExpect("a second login on the same connection",
			proto.AuthenticateRequest{RequestID: 5, Name: "alice", Password: password("alice")},
			proto.ErrorResponse{RequestID: 5, Value: proto.MsgAlreadyLoggedIn})
		other := e.dial("alice, again")
		other.callExpect("a login of a user who is logged in on another connection",
			proto.AuthenticateRequest{RequestID: 1, Name: "alice", Password: password("alice")},
			proto.ErrorResponse{RequestID: 1, Value: proto.MsgUserLoggedIn("alice")})
		a.callExpect("the first session keeps going", proto.GetUserRequest{RequestID: 6, Name: "alice"},
			proto.GetUserResponse{RequestID: 6, User: u})

		watcher.settle()
		a.send(proto.LogoutRequest{RequestID: 7})
		a.expect("a logout: the logout event to everyone, the requester included, then the answer",
			proto.UserLogoutEvent{UserID: u.ID}, proto.LogoutResponse{RequestID: 7})
		watcher.expect("a logout is announced to every open connection", proto.UserLogoutEvent{UserID: u.ID})
		a.callExpect("after a logout nothing needs a session", proto.GetUserRequest{RequestID: 8, Name: "alice"},
			proto.ErrorResponse{RequestID: 8, Value: proto.MsgNotAuthorized})
		a.authenticate("alice") // the connection stays open and may log in again

		watcher.settle()
		a.nc.Close()
		watcher.waitFor("a client that disconnects is logged out, and everyone is told", proto.UserLogoutEvent{UserID: u.ID})
		again := e.dial("alice, reconnected")
		again.authenticate("alice")
	})

	check(k, e, "lookups", func(k *testkit.T, e *env) {
		c := e.dial("client")
		c.callExpect("GetUser without a session", proto.GetUserRequest{RequestID: 1, Name: "x"},
			proto.ErrorResponse{RequestID: 1, Value: proto.MsgNotAuthorized})
		c.callExpect("GetUsers without a session", proto.GetUsersRequest{RequestID: 2, UserIDs: []uint32{1}},
			proto.ErrorResponse{RequestID: 2, Value: proto.MsgNotAuthorized})
		c.callExpect("Logout without a session", proto.LogoutRequest{RequestID: 3},
			proto.ErrorResponse{RequestID: 3, Value: proto.MsgNotAuthorized})
		b := c.register("bert")
		d := c.register("dora")
		c.authenticate("bert")
		c.callExpect("GetUser", proto.GetUserRequest{RequestID: 10, Name: "dora"}, proto.GetUserResponse{RequestID: 10, User: d})
		c.callExpect("GetUser of an unknown name", proto.GetUserRequest{RequestID: 11, Name: "zed"},
			proto.ErrorResponse{RequestID: 11, Value: proto.MsgNoSuchUser("zed")})
		c.callExpect("GetUsers keeps the order asked, leaves unknown ids out and repeats repeated ones",
			proto.GetUsersRequest{RequestID: 12, UserIDs: []uint32{d.ID, 99999, b.ID, d.ID}},
			proto.GetUsersResponse{RequestID: 12, Users: []proto.User{d, b, d}})
		c.callExpect("GetUsers of nobody", proto.GetUsersRequest{RequestID: 13, UserIDs: []uint32{}},
			proto.GetUsersResponse{RequestID: 13, Users: []proto.User{}})
	})

	check(k, e, "no-plaintext-passwords", func(k *testkit.T, e *env) {
		c := e.dial("client")
		c.call(proto.CreateUserRequest{RequestID: 1, Name: "twin1", Password: "same-Password-42"})
		c.call(proto.CreateUserRequest{RequestID: 2, Name: "twin2", Password: "same-Password-42"})
		rows, err := e.openDB().Query(`SELECT * FROM chat_users WHERE name IN ('twin1', 'twin2')`)
		if err != nil {
			k.Fatalf("reading chat_users (the original's table: id, name, password, and columns you add): %v", err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var stored [][]string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				k.Fatalf("reading chat_users: %v", err)
			}
			var row []string
			for i, v := range vals {
				s := toString(v)
				if strings.Contains(s, "same-Password-42") {
					k.Fatalf("chat_users.%s holds the password in plain text (%q): store only a salted hash "+
						"(argon2id), so that a stolen database does not give the passwords away", cols[i], s)
				}
				if cols[i] != "id" && cols[i] != "name" {
					row = append(row, s)
				}
			}
			stored = append(stored, row)
		}
		if len(stored) != 2 {
			k.Fatalf("want 2 rows in chat_users for twin1 and twin2, found %d", len(stored))
		}
		if strings.Join(stored[0], "|") == strings.Join(stored[1], "|") {
			k.Fatalf("two users with the same password have the same stored hash %q: salt each hash "+
				"(a random salt per user), or one cracked hash gives away every user who shares it", stored[0])
		}
	})

	check(k, e, "restart", func(k *testkit.T, _ *env) {
		e := start(k, impl, Config{}) // its own server: this check restarts it
		c := e.dial("client")
		u := c.register("rita")
		c.nc.Close()
		e.restart()
		r := e.dial("rita, after a restart")
		r.callExpect("the wrong password after a restart", proto.AuthenticateRequest{RequestID: 1, Name: "rita", Password: "x"},
			proto.ErrorResponse{RequestID: 1, Value: proto.MsgWrongPassword})
		r.callExpect("a user survives a restart", proto.AuthenticateRequest{RequestID: 2, Name: "rita", Password: password("rita")},
			proto.AuthenticateResponse{RequestID: 2, User: u})
	})

	userLimits(k, impl, e)
	check(k, e, "hash-outside-lock", func(k *testkit.T, _ *env) { checkHashOutsideLock(k, impl) })
	check(k, e, "hash-queue-full", func(k *testkit.T, _ *env) { checkHashQueueFull(k, impl) })
	check(k, e, "storage-failure", func(k *testkit.T, _ *env) { checkStorageFailure(k, impl, "CreateUser") })
	check(k, e, "hash-queue", func(k *testkit.T, _ *env) { checkHashQueue(k, impl) })
	check(k, e, "registration-burst", func(k *testkit.T, _ *env) { checkRegistrationBurst(k, impl) })
	check(k, e, "registration-budget", func(k *testkit.T, _ *env) { checkRegistrationBudget(k, impl) })
	check(k, e, "released", func(k *testkit.T, _ *env) { checkReleased(k, impl) })
}

func toString(v any) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case string:
		return v
	case nil:
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(fmtAny(v), "\n", " "), "\t", " "))
}
