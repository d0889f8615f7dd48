package wire

import (
	"os"
	"os/exec"
	"strconv"

	"go.opentelemetry.io/otel/propagation"
)

// CallChannelEnv names the descriptor of the plugin's end of the call
// channel, when the host hands it one. The sdk's Serve takes the
// descriptor out of the environment (TakeCallChannel) and closes it to
// every command the plugin starts.
const CallChannelEnv = "YAGENT_CALL_FD"

// ChannelTLSEnv names the descriptor a plugin reads its TLS identity from,
// when the host hands it one. The sdk's Serve takes the variable out of
// the environment and reads and closes the descriptor (TakeChannelTLS)
// before anything in the plugin can start a command.
const ChannelTLSEnv = "YAGENT_TLS_FD"

// PluginSetKey is the one plugin a yagent plugin binary dispenses, in
// go-plugin's plugin sets of both sides.
const PluginSetKey = "tools"

// TraceProp carries the host's span context to the plugin: a W3C
// traceparent in the Call stream's metadata, or in the call's frame.
var TraceProp = propagation.TraceContext{}

// AttachInherited has cmd inherit f, with the variable env naming its
// descriptor.
func AttachInherited(cmd *exec.Cmd, env string, f *os.File) {
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	cmd.Env = append(cmd.Env, env+"="+strconv.Itoa(fd))
}
