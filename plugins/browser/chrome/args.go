package chrome

import (
	"fmt"
	"strings"
)

// Options shape the browser's argv.
type Options struct {
	// UserDataDir is the fresh profile folder of this browser; required.
	UserDataDir string
	// Root says the plugin runs as root, where Chromium's sandbox cannot
	// start: only then is --no-sandbox passed.
	Root bool
	// Width and Height are the window size; 1280×720 when zero.
	Width, Height int
	// Proxy is the address (127.0.0.1:port) of the proxy every request of
	// the browser goes through; "" for none.
	Proxy string
}

// Args returns the browser's command-line flags (argv without argv[0] and
// without the transport flag and first URL, which chromedp adds): headless,
// a fresh profile, no background networking, updates, sync, default apps or
// crash reporter. The network service runs inside the browser process,
// which also keeps the process tree small.
func Args(o Options) []string {
	w, h := o.Width, o.Height
	if w <= 0 || h <= 0 {
		w, h = 1280, 720
	}
	args := []string{
		"--headless=new",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-default-apps",
		"--disable-extensions",
		"--disable-crashpad-for-testing",
		"--disable-breakpad",
		"--disable-client-side-phishing-detection",
		"--disable-domain-reliability",
		"--disable-features=Translate,MediaRouter,OptimizationHints,BackForwardCache",
		"--enable-features=NetworkServiceInProcess2",
		"--disable-dev-shm-usage",
		"--disable-popup-blocking",
		"--disable-prompt-on-repost",
		"--metrics-recording-only",
		"--no-pings",
		"--password-store=basic",
		"--use-mock-keychain",
		"--mute-audio",
		"--hide-scrollbars",
		fmt.Sprintf("--window-size=%d,%d", w, h),
		"--user-data-dir=" + o.UserDataDir,
	}
	if o.Root {
		args = append(args, "--no-sandbox")
	}
	if o.Proxy != "" {
		args = append(args, ProxyArgs(o.Proxy)...)
	}
	return args
}

// ProxyArgs send every request of the browser through the proxy at addr:
// HTTP, HTTPS and WebSockets (--proxy-server), loopback and local names
// too (Chromium would bypass the proxy for them unless told not to), no
// name looked up by the browser itself (a name never leaves the machine
// but through the proxy's judgment; the proxy's own address is a literal),
// and WebRTC with no UDP of its own (it has no way through an HTTP proxy).
func ProxyArgs(addr string) []string {
	return []string{
		"--proxy-server=http://" + addr,
		"--proxy-bypass-list=<-loopback>",
		"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--webrtc-ip-handling-policy=disable_non_proxied_udp",
	}
}

// Flag splits one argument of Args into its name and value: a string for
// --name=value, true for a bare --name.
func Flag(arg string) (name string, value any) {
	arg = strings.TrimPrefix(arg, "--")
	if name, v, ok := strings.Cut(arg, "="); ok {
		return name, v
	}
	return arg, true
}
