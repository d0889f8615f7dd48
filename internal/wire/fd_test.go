package wire

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestTakeCallChannel_NothingInheritsIt: the plugin's end, and the
// variable naming it, reach no command the plugin starts.
func TestTakeCallChannel_NothingInheritsIt(t *testing.T) {
	if os.Getenv("YAGENT_TEST_TAKE_CHANNEL") == "1" {
		conn, err := TakeCallChannel()
		if err != nil || conn == nil {
			t.Fatalf("TakeCallChannel: %v, %v", conn, err)
		}
		out, err := exec.Command("sh", "-c", `ls -l /proc/self/fd/ | grep -c socket: ; echo "env:${`+CallChannelEnv+`-unset}"`).CombinedOutput()
		if err != nil {
			t.Fatalf("sh: %v: %s", err, out)
		}
		os.Stdout.Write(out)
		return
	}
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	host, child, err := SocketPair()
	if err != nil {
		t.Skipf("no call channel here: %v", err)
	}
	defer host.Close()
	defer child.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTakeCallChannel_NothingInheritsIt$")
	cmd.Env = append(os.Environ(), "YAGENT_TEST_TAKE_CHANNEL=1")
	AttachInherited(cmd, CallChannelEnv, child)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	if got := string(out); !strings.HasPrefix(got, "0\nenv:unset\n") {
		t.Errorf("a command the plugin starts sees (sockets, then the variable):\n%s", got)
	}
}
