// Package sessiontmp keeps the sessions' own temp folders (sdk.TempFolder)
// on disk: where they live, who removes them and when.
//
// Each host process makes one folder per session under Root (a folder of
// the user's, 0700, outside /tmp where it can: /var/tmp/yagent-tmp-UID,
// or $TMPDIR/yagent-tmp-UID when TMPDIR names another folder). A folder's
// name carries its maker (s.PID.START.RANDOM, the host's pid and start
// time), and beside it a .hold folder lists the is_background commands
// that keep it (PID.START, with the command's cgroup when it has one).
//
// Ownership, exactly: the host alone removes folders. Its Folders makes a
// session's folder on the session's first call and removes it when the
// session ends, unless a background command of the session still lives:
// then it keeps looking (every half second) and removes it once the last
// one has ended. The shell plugin, which alone knows the background
// commands, only writes their records (Hold), before its call returns.
// A host that stops removes the folders of its sessions that nothing
// holds; one that crashed removes nothing, and neither does a crashed
// plugin: at its start every host sweeps Root of the folders whose maker
// is gone and that no live background command holds, and keeps looking
// at those that one still holds.
//
// A background command lives while its process does, or, when it has a
// cgroup of its own, while the cgroup holds a process (a server it left
// behind keeps the folder).
package sessiontmp
