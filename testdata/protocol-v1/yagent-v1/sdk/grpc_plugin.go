package sdk

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// grpcPlugin is the plugin's go-plugin glue: it serves the Plugin service
// and dispenses nothing (the host's side lives in internal/remote).
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server *pluginServer
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

// GRPCServer registers the plugin's Plugin service.
func (g *grpcPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	g.server.broker = broker
	pluginpb.RegisterPluginServer(s, g.server)
	return nil
}

// GRPCClient refuses: a plugin's set serves, the host dispenses.
func (g *grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("a plugin's plugin set serves tools; it dispenses no client")
}
