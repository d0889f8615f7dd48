package execwatch

import (
	"context"
	"os"
	"syscall"
)

// Exec is one execve or execveat of the tree, as the supervisor read it.
type Exec struct {
	// Pid is the process that calls exec.
	Pid int
	// Path is the absolute path of the file the kernel is asked to run
	// (relative names resolved against the process's folder, execveat's
	// descriptor followed); for the dynamic loader run as a program, the
	// program it loads.
	Path string
	// Argv are the arguments, argv[0] first.
	Argv []string
	// Interpreters are the files the #! lines of Path name, first the one
	// of Path itself.
	Interpreters []string
	// Loader says Path was run through the dynamic loader (ld-linux.so PROG).
	Loader bool
	// Terminal says the process's stdin is a terminal.
	Terminal bool
	// Unidentified says why the program cannot be identified (a memfd, a
	// deleted file, an unreadable argument); "" when it was. Such an exec
	// is treated like the strictest rule.
	Unidentified string
	// Truncated says Argv holds only what fitted in its bounds (8192
	// entries, 1 MiB in all).
	Truncated bool

	// files are the program files, open while the exec is judged: Path's
	// (or the loader's and its program's) and each interpreter's.
	files []*os.File
}

func (e *Exec) closeFiles() {
	for _, f := range e.files {
		f.Close()
	}
}

// Verdict is a Judge's answer.
type Verdict struct {
	// Allow lets the exec go on; otherwise it fails with EACCES.
	Allow bool
}

// Judge decides one exec. It may block (an ask); the exec waits.
type Judge func(ctx context.Context, e Exec) Verdict

// Filter says which calls the filter InstallFilter installs hands to its
// listener. Whatever it says, the filter refuses every call that would
// give a file the setuid or setgid bit (a chmod, or an open, creat, mkdir
// or mknod with such a mode: the file would outlive the sandbox and run
// with its owner's rights for any user), fails openat2, whose mode it
// cannot read, with ENOSYS so libc falls back to openat, and fails
// io_uring_setup with ENOSYS, as a kernel without io_uring would: a ring's
// requests open files with a mode no filter sees.
type Filter struct {
	// Exec hands every execve and execveat of the tree to Supervise's
	// judge.
	Exec bool
	// Report hands the refused set-id modes and io_uring_setup to
	// Supervise, which fails them as the kernel would have (EPERM,
	// ENOSYS) and reports each; without it the kernel fails them, and no
	// one hears of it.
	Report bool
	// Sockets hands every connect of the tree to the supervisor, which
	// reads the address once and makes the connection itself on the
	// process's socket (a pathname unix socket only when Supervision's
	// Connect allows the file the name resolves to in the process's view,
	// an abstract one through Supervision's Proxy), so no thread of the
	// process can change the address between the check and the call. A
	// unix socket of another type than stream or seqpacket cannot be made
	// (EACCES, reported with Report): a datagram socket could send to any
	// socket path with sendto or sendmsg, whose addresses no filter can
	// read and whose every call it would cost to trap. Stream and seqpacket
	// sockets ignore or refuse a send's address, and io_uring is off. In
	// the 32-bit ABIs, connect and socketcall's socket, connect and
	// socketpair fail with EACCES (their pointers cannot be read here).
	// Sockets needs a supervisor: every connect waits for it.
	Sockets bool
}

// Connect is a connect of the tree to a pathname unix socket, as the
// supervisor resolved it.
type Connect struct {
	// Pid is the thread that calls connect.
	Pid int
	// Named is the path the process gave.
	Named string
	// Path is the socket file in the process's view: absolute, its links
	// followed.
	Path string
	// Dev and Ino are the socket file's identity, to tell which file a
	// path of the process's view is where its mounts differ from the
	// supervisor's.
	Dev, Ino uint64
}

// ConnectJudge decides a connect to a pathname unix socket; it must not
// block long (the connect waits).
type ConnectJudge func(ctx context.Context, c Connect) Verdict

// Proxy connects a socket, on the tree's behalf, from a thread inside the
// tree's sandbox (its Landlock domain and namespaces), so the kernel
// applies the domain's abstract socket scope as it would to the tree's own
// call. Sock is a descriptor of the supervisor's for the process's socket;
// addr is the address as read, already copied. Its own connect comes to
// the supervisor as a notification too, and goes on unread when Tid
// names its thread.
type Proxy interface {
	Tid() int
	Connect(sock int, addr []byte) syscall.Errno
}

// Supervision is what Supervise answers with.
type Supervision struct {
	// Judge decides the tree's execs (nil when the filter has no Exec).
	Judge Judge
	// Refused hears of each call the filter refused, before it fails.
	Refused func(Refusal)
	// Connect decides the connects to pathname unix sockets of a Sockets
	// filter; nil refuses them all.
	Connect ConnectJudge
	// Proxy makes the connects to abstract unix sockets of a Sockets
	// filter; nil makes the supervisor connect them itself, which is right
	// only where the kernel does not scope abstract sockets (Landlock
	// before ABI 6): the supervisor's own thread is in no domain.
	Proxy Proxy
	// Exposed are socket files (absolute, clean) that a connect naming one
	// exactly reaches as the supervisor's view has them, not the
	// process's: the sockets an admin exposes (an ssh-agent's under /run
	// or the machine's /tmp), which the process's mounts may hide. Connect
	// still judges them, by that path.
	Exposed []string
}

// Refusal is a call of the tree that the filter refused and Supervise
// failed.
type Refusal struct {
	// Pid is the process that made the call.
	Pid int
	// Call is the system call: chmod, fchmodat, open, openat, creat,
	// mkdir, mknod, ..., io_uring_setup; connect for a connect to a unix
	// socket the supervision refused; socket or socketpair for a unix
	// datagram socket.
	Call string
	// Path is the file: absolute where the process's folder or descriptor
	// could be read, else as the process named it; the file a descriptor
	// names for fchmod; for connect the socket file as resolved in the
	// process's view, or "@" and the name of an abstract socket; "" for
	// io_uring_setup, socket and socketpair, or when it was unreadable.
	Path string
	// Mode is the mode the call asked for: its permission, sticky and
	// set-id bits.
	Mode uint32
	// Errno is what the call failed with: EPERM for a set-id mode, ENOSYS
	// for io_uring_setup, EACCES for connect, socket and socketpair.
	Errno syscall.Errno
}

// SetID says the call was refused for a setuid or setgid mode, not
// io_uring_setup.
func (r Refusal) SetID() bool { return r.Errno == syscall.EPERM }

// InstallFilter installs the filter f on the calling OS thread and returns
// its listener, nil when f hands it nothing (neither Exec nor Report). The
// caller has locked the thread for good (see RunLocked: not the main
// thread, which Go never ends, or the listener would never report the
// tree's exit) and set no_new_privs; every process the thread starts after
// it inherits the filter. The thread must then start the command
// (cmd.Start): with Exec, its exec, the first notification, is allowed
// unjudged by the time cmd.Start returns, and Supervise judges every later
// one. Only the native ABI's execve and execveat are judged; with Exec the
// x32 and 32-bit compat ABIs' execs fail with EACCES (their pointers
// cannot be read here), so a 32-bit program under the filter cannot exec.
// The set-id modes are refused in every ABI.
func InstallFilter(f Filter) (*os.File, error) {
	return installFilter(f)
}

// Supervise answers the listener's notifications until every process
// under the filter has exited (it returns nil, or ctx's error if ctx ended
// first) or ctx is done (it returns ctx's error), then closes it. Execs go
// to s.Judge (nil when the filter has no Exec), each in its own goroutine,
// so an ask blocks only that exec; its context ends with the
// supervision. Execs pending when ctx ends fail with EACCES, as does one
// whose verdict comes after; once the listener is closed the kernel fails
// any later exec with ENOSYS. An exec of a file that does not exist
// (ENOENT, ENOTDIR, ENAMETOOLONG, ELOOP) fails with that error unjudged: a
// shell's or execvp's PATH search costs no judgment. Allowing continues
// the exec: a multithreaded process can change its argument memory after
// the check (and the dynamic loader opens its program after the exec), a
// stated limit of exec rules; Landlock is the wall for files. A refused
// call of a Report filter goes to s.Refused (when not nil) before it fails,
// so what it says reaches its reader before the process goes on;
// such a call never goes on, whatever happens to the supervision. The
// connects of a Sockets filter are answered as s.Connect and s.Proxy say,
// and a refused one goes to s.Refused (Call "connect", Errno EACCES) like
// a refused unix datagram socket (Call "socket" or "socketpair").
func Supervise(ctx context.Context, listener *os.File, s Supervision) error {
	return supervise(ctx, listener, s)
}
