package sdk

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// The host resolves every role argument once, judges that value, and sends
// it: a path_read or path_write argument arrives absolute and clean, with
// "~" expanded and its symlinks followed, exactly the path the guard judged
// (spaces in it are part of the name); a url argument arrives with its
// scheme (NormalizeURL). A plugin uses these values as they are: trimming
// them, joining them with its own working folder or expanding "~" again
// would open something the guard never saw.

// PathArg returns the path argument p as the plugin must open it: p itself,
// cleaned, when it is absolute (as the host sends every path_read and
// path_write argument). A relative p is taken from the call's workspace,
// never from the plugin's working folder, which is a private empty folder;
// without a workspace it is an invalid_input error.
func PathArg(ctx context.Context, p string) (string, error) {
	info := CallFrom(ctx)
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	if info.Workspace == "" || !filepath.IsAbs(info.Workspace) {
		return "", Errorf(CodeInvalidInput, "path %q is relative and no workspace is set for this call: the host did not resolve it; give an absolute path", p)
	}
	return filepath.Join(info.Workspace, p), nil
}

// opaqueSchemes are the schemes whose URLs have no "//", so that
// "localhost:3000" is not read as scheme "localhost".
var opaqueSchemes = map[string]bool{"about": true, "data": true, "javascript": true, "blob": true, "mailto": true, "view-source": true, "chrome": true, "file": true}

// NormalizeURL returns raw as the host judges and sends it: white space
// around it dropped, and a scheme added to a bare host (http:// for
// localhost and loopback addresses, https:// otherwise). A URL that has a
// scheme is returned as it is. NormalizeURL(NormalizeURL(u)) is
// NormalizeURL(u), so a plugin may call it on what the host sent.
func NormalizeURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("url is empty; give the address to open, like https://example.com")
	}
	if strings.Contains(raw, "://") {
		if u, err := url.Parse(raw); err != nil || u.Scheme == "" {
			return "", fmt.Errorf("url %q is not an address; give a full URL like https://example.com/page", raw)
		}
		return raw, nil
	}
	if u, err := url.Parse(raw); err == nil && opaqueSchemes[strings.ToLower(u.Scheme)] {
		return raw, nil
	}
	host := raw
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	scheme := "https://"
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		scheme = "http://"
	} else if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsLoopback() {
		scheme = "http://"
	}
	u, err := url.Parse(scheme + raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("url %q is not an address; give a full URL like https://example.com/page", raw)
	}
	return u.String(), nil
}
