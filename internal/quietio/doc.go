// Package quietio reads and writes non-blocking pipes and sockets with raw
// system calls, waiting in the runtime's poller as the os and net packages
// do, so that a message crossing between yagent's processes wakes no
// thread but the one that handles it.
//
// The os and net packages make each read and write a system call with the
// scheduler's bookkeeping around it (entersyscall). After an idle spell,
// with every processor parked, the runtime's monitor thread (sysmon) sleeps
// until that bookkeeping wakes it: the first system call of each burst
// costs a futex wake-up and a thread switch. A call through a plugin is two
// such bursts in the host and one in the plugin, besides the stdio front's
// own, each on the path of the answer. A read or write on a non-blocking
// descriptor returns at once, so it needs none of the bookkeeping: the
// runtime only needs it for a call that may block. See
// docs/ARCHITECTURE.md, "Wire", for where yagent uses it.
//
// A Unix socket the runtime polls wakes its poller thread once more each
// time the peer reads what it wrote (the poller watches it for room to
// write as well): Conn keeps a socket out of the runtime's poller and
// waits on epoll instances of its own, one watching for input and one
// watching for room only while a write waits for it.
//
// A socket's reads can also spin (Spinner): a read that finds nothing
// reads again for a moment before it waits in the poller, so that an
// answer due soon finds the thread running rather than asleep.
//
// Only Linux takes the raw path; elsewhere Conn and File return what they
// were given.
package quietio
