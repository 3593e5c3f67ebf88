// The harness's completion record: a secret handed to the test binary on its
// own descriptor, and a MAC per test that only the harness can write, so a
// pass printed by the student's code is not a pass (exec.go runs the binary).

package grade

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

func newSecret() ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return []byte(hex.EncodeToString(b)), nil
}

// recordMAC must agree with tests/testkit/record.go.
func recordMAC(secret []byte, test string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("pass\x00" + test))
	return hex.EncodeToString(m.Sum(nil))
}

// channel is one run's secret and the file its records land in.
type channel struct {
	kind    string
	secret  []byte
	path    string   // the record file
	closers []func() // what to close once the run is over
	opened  []*os.File
}

// handOver gives cmd the secret and somewhere to write records: inherited
// descriptors where the platform has them, else the environment.
func (rn *runner) handOver(cmd *exec.Cmd, secret []byte) (*channel, error) {
	f, err := os.CreateTemp(rn.tmp, "record-")
	if err != nil {
		return nil, err
	}
	ch := &channel{secret: secret, path: f.Name()}
	ch.closers = append(ch.closers, func() { os.Remove(ch.path) })
	if rn.user != nil {
		_ = rn.user.own(ch.path)
	}
	cmd.Env = append(rn.env[:len(rn.env):len(rn.env)], "")
	if runtime.GOOS == "windows" {
		f.Close()
		ch.kind = channelEnv
		cmd.Env[len(cmd.Env)-1] = "SERVERLAB_GRADE=env"
		cmd.Env = append(cmd.Env, "SERVERLAB_GRADE_SECRET="+string(secret), "SERVERLAB_GRADE_RECORD="+ch.path)
		return ch, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		f.Close()
		ch.close()
		return nil, err
	}
	// The secret fits in the pipe's buffer: written before the binary starts,
	// it is all there when the harness reads it at initialisation.
	_, _ = w.Write(secret)
	w.Close()
	ch.kind = channelFD
	cmd.Env[len(cmd.Env)-1] = "SERVERLAB_GRADE=fd"
	cmd.ExtraFiles = []*os.File{r, f} // fd 3, fd 4
	ch.opened = []*os.File{r, f}
	return ch, nil
}

// started closes the grader's copies of the descriptors the binary inherited.
func (ch *channel) started() {
	for _, f := range ch.opened {
		f.Close()
	}
	ch.opened = nil
}

func (ch *channel) close() {
	ch.started()
	for _, c := range ch.closers {
		c()
	}
}

// recorded reports whether the record file holds a valid pass of test.
func (ch *channel) recorded(test string) bool {
	f, err := os.Open(ch.path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10)) // the harness writes a line per test; junk is not read whole
	want := "pass " + test + " " + recordMAC(ch.secret, test)
	for _, l := range strings.Split(string(b), "\n") {
		if hmac.Equal([]byte(strings.TrimSpace(l)), []byte(want)) {
			return true
		}
	}
	return false
}

// Channel kinds: how the secret reached the harness.
const (
	channelFD  = "fd"  // inherited descriptors: out of band
	channelEnv = "env" // the environment (no descriptors to inherit): not tamper-proof
)
