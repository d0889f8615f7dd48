package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/sdk/sandbox"
)

// TestServe_ProxyToUpstreamsOnAnotherNetwork: upstreams in a network
// namespace the test makes (a veth pair, addresses of 198.18.0.0/15, the
// benchmarking block: never a public address), reached by a command under
// sandbox.network: proxy the way real tools do, by the proxy variables:
// curl, git over smart HTTP, npm from a registry there and Python's
// urllib. The same command's direct
// connect to the upstream's address and a DNS query there (UDP) fail: the
// session's namespace has no way out but the proxy.
func TestServe_ProxyToUpstreamsOnAnotherNetwork(t *testing.T) {
	if os.Geteuid() != 0 || !sandbox.Probe().NetNS {
		t.Skip("needs root and network namespaces to make the upstreams' network")
	}
	for _, tool := range []string{"ip", "curl", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	upIP := vethNetwork(t)

	// A bare repository served by git-http-backend, and a plain page.
	repos := t.TempDir()
	src := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"},
		{"clone", "-q", "--bare", src, filepath.Join(repos, "repo.git")},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/git/", &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Root: "/git",
		Env:  []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"},
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "page from the other network") })
	var base string // the upstream's URL, once it listens
	tarball := npmTarball(t, "tiny-pkg", "1.0.0")
	mux.HandleFunc("/npm/tiny-pkg", func(w http.ResponseWriter, _ *http.Request) {
		sha1sum, sha512sum := sha1.Sum(tarball), sha512.Sum512(tarball)
		doc := map[string]any{"name": "tiny-pkg", "dist-tags": map[string]string{"latest": "1.0.0"},
			"versions": map[string]any{"1.0.0": map[string]any{"name": "tiny-pkg", "version": "1.0.0", "dist": map[string]string{
				"tarball":   base + "/npm/tiny-pkg/-/tiny-pkg-1.0.0.tgz",
				"shasum":    hex.EncodeToString(sha1sum[:]),
				"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
			}}}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	})
	mux.HandleFunc("/npm/tiny-pkg/-/tiny-pkg-1.0.0.tgz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(tarball) })
	l := listenIn(t, "/run/netns/"+vethName(t), net.JoinHostPort(upIP, "0"))
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	base = "http://" + l.Addr().String()

	e := newEnv(t)
	e.userConfig("sandbox: {network: proxy}\nnetwork: {allow: [\"198.18.0.0/15\"]}\n")
	c := e.serve(nil)
	run := func(cmd string) string {
		t.Helper()
		return text(c.call(t, "run_bash", map[string]any{"command": cmd}))
	}
	if out := run("curl -sS " + base + "/page"); !strings.Contains(out, "page from the other network") {
		t.Errorf("curl by the proxy variables: %q", out)
	}
	if out := run("git clone -q " + base + "/git/repo.git clone && git -C clone log --format=%s"); !strings.Contains(out, "first") {
		t.Errorf("git clone over smart HTTP: %q", out)
	}
	if _, err := exec.LookPath("npm"); err == nil {
		out := run("npm install --no-audit --no-fund --registry " + base + "/npm/ tiny-pkg >/dev/null && cat node_modules/tiny-pkg/package.json")
		if !strings.Contains(out, `"version": "1.0.0"`) {
			t.Errorf("npm install from a registry on the other network: %q", out)
		}
	}
	if out := run(`/usr/bin/python3 -c 'import urllib.request; print(urllib.request.urlopen("` + base + `/page").read().decode())'`); !strings.Contains(out, "page from the other network") {
		t.Errorf("Python's urllib: %q", out)
	}
	if out := run("curl -sS --max-time 5 --noproxy '*' " + base + "/page; echo rc=$?"); strings.Contains(out, "page from") || strings.Contains(out, "rc=0") {
		t.Errorf("a direct connect reached the upstream: %q", out)
	}
	udp := `/usr/bin/python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("` + upIP + `", 53)); print("sent")
except OSError as e:
    print("refused:", e)'`
	if out := run(udp); !strings.Contains(out, "refused:") {
		t.Errorf("a DNS query (a UDP datagram to port 53) to the upstream's network: %q", out)
	}
}

// vethNetwork makes the upstreams' namespace and a veth pair to it, and
// returns the upstreams' address there (198.18.x.2 of a /30 of the
// process's own).
func vethNetwork(t *testing.T) string {
	t.Helper()
	name := vethName(t)
	third := os.Getpid() % 250
	hostIP, upIP := fmt.Sprintf("198.18.%d.1", third), fmt.Sprintf("198.18.%d.2", third)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	ip("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ip("link", "add", name+"h", "type", "veth", "peer", "name", name+"u")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name+"h").Run() })
	ip("link", "set", name+"u", "netns", name)
	ip("addr", "add", hostIP+"/30", "dev", name+"h")
	ip("link", "set", name+"h", "up")
	ip("-n", name, "addr", "add", upIP+"/30", "dev", name+"u")
	ip("-n", name, "link", "set", name+"u", "up")
	ip("-n", name, "link", "set", "lo", "up")
	return upIP
}

// vethName is the test's namespace and link prefix: short (a link name
// holds 15 bytes), of this process.
func vethName(t *testing.T) string {
	t.Helper()
	return fmt.Sprintf("yg%d", os.Getpid()%100000)
}

// listenIn listens on addr inside the network namespace at nsPath, from a
// thread that goes back to the process's own namespace after.
func listenIn(t *testing.T, nsPath, addr string) net.Listener {
	t.Helper()
	type res struct {
		l   net.Listener
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		back, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		defer unix.Close(back)
		ns, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		defer unix.Close(ns)
		if err := unix.Setns(ns, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		l, err := net.Listen("tcp4", addr)
		if unix.Setns(back, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- res{l, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("listen in %s: %v", nsPath, r.err)
	}
	t.Cleanup(func() { r.l.Close() })
	return r.l
}

// npmTarball is an npm package of name and version: its package.json
// alone, under package/.
func npmTarball(t *testing.T, name, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := fmt.Sprintf("{\n  \"name\": %q,\n  \"version\": %q\n}\n", name, version)
	if err := tw.WriteHeader(&tar.Header{Name: "package/package.json", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
