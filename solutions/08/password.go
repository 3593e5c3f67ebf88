package chatscale

import (
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"serverlab/tools/given/chatcore/guard"
)

// DefaultHashIterations is the PBKDF2-SHA256 cost of a password hash:
// about 20 ms of one core on the course's machine, so that the original
// load tester's 450 clients registering at once (450 hashes; their logins
// are remembered, see admission.go) take about 4.5 s of two cores, inside
// its 10 s limit. OWASP asks for 600,000 (-hash-iterations) where there are
// cores to spare. Chapter 07 taught the memory-hard hash; this chapter
// keeps the standard library's, which is enough never to store a password.
const DefaultHashIterations = 100_000

// hashPassword returns the encoded hash of password with a fresh salt:
// "pbkdf2-sha256$<iterations>$<salt>$<key>".
func hashPassword(password string, iterations int) (string, error) {
	salt := make([]byte, 16)
	guard.Random(salt)
	key, err := pbkdf2.Key(sha256.New, password, salt, iterations, 32)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("pbkdf2-sha256$%d$%s$%s", iterations, enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// checkPassword reports whether password matches the encoded hash.
func checkPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2-sha256" {
		return false
	}
	iterations, err := strconv.Atoi(parts[1])
	if err != nil || iterations <= 0 {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[2])
	want, err2 := enc.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iterations, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}
