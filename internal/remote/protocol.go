package remote

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc"

	"github.com/yagent/yagent/sdk"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// PreviousProtocolVersion is the plugin protocol before sdk.ProtocolVersion,
// which the host still speaks: a plugin built against the sdk of the last
// version keeps loading (docs/ARCHITECTURE.md, "Plugin protocol versions").
const PreviousProtocolVersion = sdk.ProtocolVersion - 1

// ProtocolVersions are the plugin protocol versions the host speaks, newest
// first.
var ProtocolVersions = []int{sdk.ProtocolVersion, PreviousProtocolVersion}

// Version 1 has the messages of version 2 less what version 2 added (the
// Sandbox's network_mode and egress, fields a version-1 plugin skips as
// unknown), so the host speaks it with version 2's stubs under version 1's
// service names, which a plugin built on that sdk registered: its proto
// package was yagent.plugin.v1. A version-1 plugin reads only the Sandbox's
// boolean network, which the host sets for network "on" alone: under
// "proxy" its commands get no network at all, never an unproxied one.
const previousPackage = "yagent.plugin.v1"

// currentPackage is the package of the generated stubs, yagent.plugin.v2.
var currentPackage = string(pluginpb.File_plugin_proto.Package())

// servicePackage is the proto package of the services of a protocol
// version.
func servicePackage(version int) string {
	if version == PreviousProtocolVersion {
		return previousPackage
	}
	return currentPackage
}

// renamedConn calls the services of version 2's stubs by the names of
// another generation: "/yagent.plugin.v2.Plugin/Call" becomes
// "/yagent.plugin.v1.Plugin/Call".
type renamedConn struct {
	grpc.ClientConnInterface
	pkg string
}

func (c renamedConn) method(m string) string {
	if rest, ok := strings.CutPrefix(m, "/"+currentPackage+"."); ok {
		return "/" + c.pkg + "." + rest
	}
	return m
}

func (c renamedConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.ClientConnInterface.Invoke(ctx, c.method(method), args, reply, opts...)
}

func (c renamedConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.ClientConnInterface.NewStream(ctx, desc, c.method(method), opts...)
}

// pluginClient is the Plugin service's client for a protocol version.
func pluginClient(conn grpc.ClientConnInterface, version int) pluginpb.PluginClient {
	if pkg := servicePackage(version); pkg != currentPackage {
		conn = renamedConn{ClientConnInterface: conn, pkg: pkg}
	}
	return pluginpb.NewPluginClient(conn)
}

// registerHost serves the host's callbacks under the Host service's name
// in a protocol version.
func registerHost(s *grpc.Server, h pluginpb.HostServer, version int) {
	desc := pluginpb.Host_ServiceDesc
	desc.ServiceName = servicePackage(version) + strings.TrimPrefix(desc.ServiceName, currentPackage)
	s.RegisterService(&desc, h)
}

// VersionError refuses a plugin that speaks a protocol version the host
// does not.
type VersionError struct {
	Path   string
	Plugin int
}

func (e *VersionError) Error() string {
	fix := fmt.Sprintf("rebuild it against an sdk of protocol %d (or %d)", sdk.ProtocolVersion, PreviousProtocolVersion)
	if e.Plugin > sdk.ProtocolVersion {
		fix = fmt.Sprintf("upgrade yagent to a release that speaks protocol %d, or use a release of the plugin built for protocol %d", e.Plugin, sdk.ProtocolVersion)
	}
	return fmt.Sprintf("%s speaks plugin protocol %d; this yagent speaks %d and %d: %s", e.Path, e.Plugin, sdk.ProtocolVersion, PreviousProtocolVersion, fix)
}
