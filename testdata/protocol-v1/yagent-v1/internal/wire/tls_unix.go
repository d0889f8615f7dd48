//go:build unix

package wire

import "crypto/tls"

// TakeChannelTLS returns the plugin's side of the channel TLS the host
// named in ChannelTLSEnv, or nil when it named none (a host that uses
// go-plugin's AutoMTLS, or none); the descriptor is read and closed
// before anything else can start a command.
func TakeChannelTLS() (*tls.Config, error) {
	f, err := takeInherited(ChannelTLSEnv, "channel-tls")
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadChannelTLS(f)
}
