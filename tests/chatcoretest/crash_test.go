//go:build crash

package chatcoretest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// TestKill9 is the real durability check, which the graded suite cannot make
// in-process: it builds the chapter's server, and 100 times over sends chat
// messages, kills the process with SIGKILL right after the 10th echo, starts
// it again on the same database, and checks that every echoed message is
// there and that the next message gets a larger id.
//
//	go test -tags crash -run Kill9 -v ./tests/chatcoretest
//	CHATCORE_SERVER=serverlab/chapters/07/cmd/chatcore-server go test -tags crash …
func TestKill9(t *testing.T) {
	pkg := os.Getenv("CHATCORE_SERVER")
	if pkg == "" {
		pkg = "serverlab/solutions/07/cmd/chatcore-server"
	}
	trials := 100
	if s := os.Getenv("CHATCORE_TRIALS"); s != "" {
		trials, _ = strconv.Atoi(s)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "chatcore-server")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	db := filepath.Join(dir, "crash.db")
	var lastID uint32
	for trial := range trials {
		addr, proc := startProcess(t, bin, db)
		c := dialProto(t, addr)
		if trial == 0 {
			c.rpc(t, proto.CreateUserRequest{RequestID: c.NextID(), Name: "crash", Password: "pw"})
		}
		u := c.rpc(t, proto.AuthenticateRequest{RequestID: c.NextID(), Name: "crash", Password: "pw"}).(proto.AuthenticateResponse).User
		ch := c.rpc(t, proto.CreateChannelRequest{RequestID: c.NextID(), Name: "crash"}).(proto.CreateChannelResponse).Channel
		c.rpc(t, proto.JoinChannelRequest{RequestID: c.NextID(), ChannelID: ch.ID})
		var frames []byte
		for i := range 20 {
			b, _ := proto.Encode(proto.WriteChat{Content: fmt.Sprintf("trial %d message %d", trial, i)})
			frames = append(frames, b...)
		}
		c.nc.Write(frames)
		echoed := 0
		for echoed < 10 {
			m := c.recv(t)
			if rc, ok := m.(proto.ReceiveChat); ok && rc.UserID == u.ID {
				echoed++
			}
		}
		proc.Process.Signal(syscall.SIGKILL) // right after the 10th echo
		proc.Wait()
		c.nc.Close()

		addr, proc = startProcess(t, bin, db)
		c = dialProto(t, addr)
		c.rpc(t, proto.AuthenticateRequest{RequestID: c.NextID(), Name: "crash", Password: "pw"})
		hist := c.rpc(t, proto.GetChatsRequest{RequestID: c.NextID(), ChannelID: ch.ID, Limit: 1000}).(proto.GetChatsResponse)
		have := map[string]uint32{}
		for _, m := range hist.Messages {
			have[m.Content] = m.ID
		}
		for i := range 10 {
			content := fmt.Sprintf("trial %d message %d", trial, i)
			id, ok := have[content]
			if !ok {
				t.Fatalf("trial %d: %q was echoed before the kill, but is not in the history after the restart", trial, content)
			}
			if id <= lastID {
				t.Fatalf("trial %d: %q has id %d, not above the last id %d of the trial before: an id was reused", trial, content, id, lastID)
			}
			lastID = max(lastID, id)
		}
		for _, m := range hist.Messages {
			lastID = max(lastID, m.ID)
		}
		proc.Process.Signal(syscall.SIGKILL)
		proc.Wait()
		c.nc.Close()
	}
	t.Logf("%d/%d trials: every echoed message survived kill -9, and no id was reused", trials, trials)
}

func startProcess(t *testing.T, bin, db string) (string, *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command(bin, "--ip", "127.0.0.1", "--port", port, "--db", db, "--log", "error", "-hash-memory", "64", "-hash-time", "1")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, cmd
		}
		time.Sleep(10 * time.Millisecond) // polling a process's start-up: nothing to wait on
	}
	t.Fatalf("the server did not listen on %s within 10s", addr)
	return "", nil
}

type protoConn struct {
	*proto.Conn
	nc net.Conn
}

func dialProto(t *testing.T, addr string) *protoConn {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return &protoConn{Conn: proto.NewConn(nc), nc: nc}
}

func (c *protoConn) recv(t *testing.T) proto.Message {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := c.Recv()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

// rpc sends req and returns its answer, failing on a 100.
func (c *protoConn) rpc(t *testing.T, req proto.Requester) proto.Message {
	t.Helper()
	if err := c.Send(req); err != nil {
		t.Fatal(err)
	}
	for {
		m := c.recv(t)
		if r, ok := m.(proto.Requester); ok && r.Request() == req.Request() {
			if e, ok := m.(proto.ErrorResponse); ok {
				t.Fatalf("request of type %d: %s", req.Type(), e.Value)
			}
			return m
		}
	}
}
