package remote

import (
	"context"
	"testing"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/yagent/yagent/sdk"
)

// Loopback connects to a plugin's side served in this process (serverSet,
// from sdk.ServerPluginSet) as the host connects to a plugin process: over
// gRPC with go-plugin's broker, host answering the plugin's callbacks. It
// is for tests (sdk/plugintest and this package's); the connection closes
// when t ends.
func Loopback(t testing.TB, serverSet map[int]plugin.PluginSet, host sdk.Host) (*Client, error) {
	t.Helper()
	clientSet := PluginSet(host)
	ps := plugin.PluginSet{}
	for key, srv := range serverSet[sdk.ProtocolVersion] {
		ps[key] = bothSides{server: srv.(plugin.GRPCPlugin), client: clientSet[sdk.ProtocolVersion][key].(plugin.GRPCPlugin)}
	}
	client, server := plugin.TestPluginGRPCConn(t, false, ps)
	t.Cleanup(func() {
		server.Stop()
		_ = client.Close()
	})
	return Dispense(client)
}

// bothSides is one go-plugin plugin serving the plugin's side and
// dispensing the host's, as a loopback connection needs.
type bothSides struct {
	plugin.NetRPCUnsupportedPlugin
	server, client plugin.GRPCPlugin
}

func (b bothSides) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	return b.server.GRPCServer(broker, s)
}

func (b bothSides) GRPCClient(ctx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return b.client.GRPCClient(ctx, broker, conn)
}
