package sdk

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// grpcPlugin is the go-plugin glue of both sides: server is set in a plugin
// process, host in the host (a plugin set used by both, as in tests, has
// both).
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server *pluginServer
	host   Host
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

// GRPCServer registers the plugin's Plugin service.
func (g *grpcPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	if g.server == nil {
		return errors.New("this plugin set has no tools to serve")
	}
	g.server.broker = broker
	pluginpb.RegisterPluginServer(s, g.server)
	return nil
}

// GRPCClient returns the host's *Remote and starts serving the host's
// callbacks to the plugin over the broker.
func (g *grpcPlugin) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return newRemote(ctx, broker, conn, g.host), nil
}

// ClientPluginSet returns the go-plugin plugin set the host launches a
// plugin with, for plugin.ClientConfig.VersionedPlugins. Dispensing it
// yields a *Remote. host answers the plugin's callbacks; its methods find
// the call they belong to with CallFrom(ctx) (ID, Tool, SessionID and the
// rest of the CallInfo the host passed to Remote.Call). RequestApproval
// runs under the call's own context (the ctx given to Remote.Call, with
// its values) and only for a call in flight; a request naming any other
// call is refused without reaching host. Progress of a call made with a
// progress func goes to that func instead. A nil host approves nothing and
// ignores reports.
func ClientPluginSet(host Host) map[int]plugin.PluginSet {
	if host == nil {
		host = noHost{}
	}
	return map[int]plugin.PluginSet{
		ProtocolVersion: {pluginSetKey: &grpcPlugin{host: host}},
	}
}

// DispenseRemote dispenses the *Remote of a started go-plugin client
// protocol (plugin.Client.Client()).
func DispenseRemote(c plugin.ClientProtocol) (*Remote, error) {
	raw, err := c.Dispense(pluginSetKey)
	if err != nil {
		return nil, err
	}
	r, ok := raw.(*Remote)
	if !ok {
		return nil, errors.New("dispensed plugin is not a yagent tool plugin")
	}
	return r, nil
}
