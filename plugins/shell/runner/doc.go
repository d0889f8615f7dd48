// Package runner runs bash commands for the shell plugin and decides who
// owns each process it starts.
//
// Ownership, exactly:
//
//   - Foreground (run_bash without is_background): bash runs in its own
//     process group (Setpgid), its output comes back through pipes, and the
//     group is registered in the Manager's live groups and reported to the
//     host (sdk.Host.ReportProcessGroup) from start to end. The timeout
//     (default 10 minutes) and the call's cancellation kill the whole group
//     (cmd.Cancel = kill(-pgid, SIGKILL)). When the command exits, the call
//     returns. Processes it left behind (`cmd &`, `nohup … &`) may still
//     hold its output pipe: the call reads on while their output flows and
//     stops once it has been quiet for Options.OutputQuiet (200 ms), at
//     most Options.WaitDelay (3 s) after the exit, then closes the pipe on
//     them (they are not killed) and says so in the receipt. A cancel that
//     comes after the call returned kills nothing.
//   - Yielded: a foreground command still running after yield_time_ms
//     (default 15 s; 2 s for known servers and watchers; earlier when the
//     call's deadline would come first) goes on as a task of
//     the call's session. The call returns a task id, the output so far and
//     a diagnosis. The task stays owned: registered, reported, under the
//     same timeout, killed by shell_cancel, by KillLiveProcessGroups and when
//     the plugin shuts down. It runs under a context of its own, so the
//     cancellation of the call that yielded it (which has returned) does not
//     kill it.
//   - Background (is_background): bash starts in its own session and group
//     (Setsid) with stdout and stderr on a log file in the session folder
//     (no pipes, so nothing breaks when the plugin goes) and is not
//     registered: it outlives the call, the plugin and the host. It still
//     gets a task id, to read its log with shell_wait and to stop it with
//     shell_cancel.
//
// KillLiveProcessGroups kills every registered group: the plugin calls it on
// Shutdown, and the host does the same with the groups it was told about
// when the plugin itself is dead.
//
// Under a sandbox that is not off, each command is also born in a cgroup v2
// of its own (package cgroup; CLONE_INTO_CGROUP): live-N for a foreground
// command, bg-N for a background one. Every kill above of a command in
// flight (timeout, cancel, shell_cancel, KillLiveProcessGroups, Shutdown)
// is then cgroup.kill too, which reaches the children that left the group
// (setsid, setsid -f, set -m, double forks); a dead plugin's host kills its
// live-N groups. As a call returns with its command finished, and as a
// yielded task's command ends, the group is released: the processes left
// in it are never killed later (`nohup server &`): the group is marked
// released (or they move to kept-N) and the host skips it. A
// bg-N group outlives the call; shell_cancel kills it whole. Without a
// writable cgroup v2 the process groups are all there is (a required
// sandbox refuses the command instead).
//
// Each command's TMPDIR is its session's own temp folder (sdk.TempFolder):
// /tmp where the sandbox binds the folder over /tmp, /var/tmp and /dev/shm
// (sandbox.Policy.TmpOver), the folder itself where nothing is bound. A
// background command is recorded as holding the folder (sessiontmp.Hold)
// before its call returns: the host, which alone removes the folder, keeps
// it while the command, or what it left in its cgroup, lives. EndSession
// lets the session's kept mount namespace go.
//
// The cgroup also bounds the command's tree as the call's sandbox says
// (sandbox.pids: processes and threads; sandbox.memory_mb: memory, swap
// included): through the cgroup v2 controllers where the machine enables
// them, else through groups of the command's own in the cgroup v1
// hierarchies, which the thread that starts it joins before the fork
// (package cgroup). As the command ends, before its group is let go, the
// plugin reads what the bounds refused: a tree that ran into one is
// killed whole (what it left, a fork bomb's survivors, does not run on at
// the bound), and the result says which bound, its value, what it refused
// (forks; processes the kernel killed for memory) and what to do, in a
// "yagent sandbox:" line, and names it in Data.BoundsHit. A bound the
// machine lacks is not set: the command runs without it (yagent doctor
// says so).
//
// The host decides, before a call reaches this package, whether a command
// may run (its parse-time command analysis); this package only executes.
// Input typed into a terminal task is the exception, since only this
// package sees what reads it: write_stdin finds the terminal's foreground
// program (tcgetpgrp, then the files its processes run) and puts the text
// to the host (sdk.ApprovalStdin) before typing it: a shell's whole line is
// judged like a command, text for any other program asks.
// Programs that a command starts (make recipes, npm scripts, anything a
// script execs) are never seen by that parse-time boundary.
package runner
