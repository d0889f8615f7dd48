package pluginmgr

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/yagent/yagent/internal/remote"
)

// TestChannelTLS_PluginRefusesStrangers: a launched plugin's gRPC socket
// serves the host alone. A process that reaches it (any process of the
// user can open the socket file) with no TLS, with a key of its own, or
// with the host's key of another launch gets no answer, while the host's
// own connection keeps working.
func TestChannelTLS_PluginRefusesStrangers(t *testing.T) {
	m := newManager(t, Options{})
	p := loadTest(t, m)
	if got := echo(t, p, "before"); got.Text != "before" {
		t.Fatalf("echo: %+v", got)
	}
	p.mu.Lock()
	inst := p.inst
	p.mu.Unlock()
	rc := inst.client.ReattachConfig()
	if rc == nil || rc.Addr == nil {
		t.Fatal("no address for the running plugin")
	}
	target := rc.Addr.Network() + ":" + rc.Addr.String()

	stranger := func() *tls.Config {
		c, err := remote.NewChannelTLS() // a key pair the plugin never saw
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		cfg := c.Config().Clone()
		cfg.InsecureSkipVerify = true // trusts whatever answers
		return cfg
	}
	for name, creds := range map[string]credentials.TransportCredentials{
		"plaintext":        insecure.NewCredentials(),
		"a key of its own": credentials.NewTLS(stranger()),
		"no certificate":   credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}),
	} {
		conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "plugin"})
		cancel()
		conn.Close()
		if err == nil {
			t.Errorf("%s: the plugin answered a stranger: %v", name, resp.GetStatus())
		}
	}
	if got := echo(t, p, "after"); got.Text != "after" {
		t.Errorf("the host's connection after the strangers': %+v", got)
	}
}
