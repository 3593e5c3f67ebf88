package judge

// The grader tells a test binary its role in RoleEnv and hands it the
// socket to the other process as descriptor SocketFD.
const (
	RoleEnv  = "SERVERLAB_JUDGE_ROLE"
	SocketFD = 3
	// SocketIDEnv names the subject's socket, "device:inode" (see
	// socketid_unix.go): the grader sets it, and a caller's copy is dropped.
	SocketIDEnv = "SERVERLAB_JUDGE_SOCKET"
	// Judge and Subject are RoleEnv's values.
	Judge   = "judge"
	Subject = "subject"
)

// PIDFD is the descriptor on which the grader tells the judge the subject's
// process id, once it has started it: the judge does not take the subject's
// word for which process it is.
const PIDFD = 4
