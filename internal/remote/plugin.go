package remote

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/yagent/yagent/internal/wire"
	"github.com/yagent/yagent/sdk"
)

// grpcPlugin is the host's go-plugin glue: it dispenses a *Client and
// serves no plugin (the sdk's ServerPluginSet is the plugin's side).
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	host    sdk.Host
	version int // the protocol version the set is of
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

// GRPCServer refuses: the host's plugin set dispenses, it serves nothing.
func (g *grpcPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the host's plugin set serves no tools")
}

// GRPCClient returns the host's *Client and starts serving the host's
// callbacks to the plugin over the broker.
func (g *grpcPlugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return newClient(ctx, broker, conn, g.host, g.version), nil
}

// PluginSet returns the go-plugin plugin set the host launches a plugin
// with, for plugin.ClientConfig.VersionedPlugins. Dispensing it yields a
// *Client. host answers the plugin's callbacks; its methods find the call
// they belong to with sdk.CallFrom(ctx) (ID, Tool, SessionID and the rest
// of the CallInfo the host passed to Client.Call). RequestApproval runs
// under the call's own context (the ctx given to Client.Call, with its
// values) and only for a call in flight; a request naming any other call
// is refused without reaching host. Progress of a call made with a
// progress func goes to that func instead. A nil host approves nothing and
// ignores reports. The set holds every version in ProtocolVersions: the
// plugin picks the newest it speaks.
func PluginSet(host sdk.Host) map[int]plugin.PluginSet {
	set := make(map[int]plugin.PluginSet, len(ProtocolVersions))
	for _, v := range ProtocolVersions {
		set[v] = plugin.PluginSet{wire.PluginSetKey: &grpcPlugin{host: host, version: v}}
	}
	return set
}

// Dispense dispenses the *Client of a started go-plugin client protocol
// (plugin.Client.Client()).
func Dispense(c plugin.ClientProtocol) (*Client, error) {
	raw, err := c.Dispense(wire.PluginSetKey)
	if err != nil {
		return nil, err
	}
	r, ok := raw.(*Client)
	if !ok {
		return nil, errors.New("dispensed plugin is not a yagent tool plugin")
	}
	return r, nil
}
