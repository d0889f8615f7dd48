package testbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// ProtocolV1Dir is the module of the version-1 fixture plugin, relative to
// the module root: yagent-plugin-oldproto, built against a frozen copy of
// the sdk of plugin protocol 1 (testdata/protocol-v1/README.md).
const ProtocolV1Dir = "testdata/protocol-v1/plugin"

// BuildModule compiles the main package of another module, the folder dir
// relative to the module root, into out, outside any go.work: it builds as
// its go.mod says, as its author would build it.
func BuildModule(dir, out string) error {
	root, err := Root()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join(root, dir)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOWORK=") }), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v\n%s", dir, err, b)
	}
	return nil
}
