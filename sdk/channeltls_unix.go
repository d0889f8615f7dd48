//go:build unix

package sdk

import (
	"crypto/tls"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// takeChannelTLS returns the plugin's side of the channel TLS the host
// named in ChannelTLSEnv, or nil when it named none (a host that uses
// go-plugin's AutoMTLS, or none). The variable goes from the environment
// and the descriptor is read and closed before anything else can start a
// command.
func takeChannelTLS() (*tls.Config, error) {
	raw, ok := os.LookupEnv(ChannelTLSEnv)
	if !ok {
		return nil, nil
	}
	_ = os.Unsetenv(ChannelTLSEnv)
	fd, err := strconv.Atoi(raw)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not a descriptor the host could have passed", ChannelTLSEnv, raw)
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "channel-tls")
	defer f.Close()
	return readChannelTLS(f)
}
