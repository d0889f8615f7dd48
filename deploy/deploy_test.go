package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/yagent/yagent/host/pluginmgr"
	"github.com/yagent/yagent/internal/testbuild"
)

// The parts of the manifests these tests read.

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"` // a number or a port name
	} `yaml:"httpGet"`
}

type container struct {
	Name    string   `yaml:"name"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Ports   []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	StartupProbe   *probe `yaml:"startupProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type statefulSet struct {
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Template struct {
			Spec struct {
				SecurityContext struct {
					RunAsUser *int `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []container `yaml:"containers"`
				Volumes    []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
						Items      []any  `yaml:"items"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		VolumeClaimTemplates []struct {
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
	} `yaml:"spec"`
}

type service struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		Ports []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type ingress struct {
	Metadata struct {
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		Rules []struct {
			HTTP struct {
				Paths []struct {
					Path    string `yaml:"path"`
					Backend struct {
						Service struct {
							Name string `yaml:"name"`
							Port struct {
								Name   string `yaml:"name"`
								Number int    `yaml:"number"`
							} `yaml:"port"`
						} `yaml:"service"`
					} `yaml:"backend"`
				} `yaml:"paths"`
			} `yaml:"http"`
		} `yaml:"rules"`
	} `yaml:"spec"`
}

type secret struct {
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	StringData map[string]string `yaml:"stringData"`
}

func readYAML(t *testing.T, file string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("k8s", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("k8s/%s: %v", file, err)
	}
}

// pod returns the StatefulSet and its yagent container.
func pod(t *testing.T) (*statefulSet, *container) {
	t.Helper()
	var s statefulSet
	readYAML(t, "statefulset.yaml", &s)
	cs := s.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("k8s/statefulset.yaml: %d containers, want the one yagent container", len(cs))
	}
	return &s, &cs[0]
}

// dockerfile is the final stage of deploy/Dockerfile.
type dockerfile struct {
	Entrypoint, Cmd []string
	Expose          []int
	User, Workdir   string
	Env             map[string]string
	Healthcheck     []string
	// Copies maps each source of a COPY to its destination.
	Copies map[string]string
}

// readDockerfile reads the instructions of the Dockerfile's last stage
// that these tests check (exec-form ENTRYPOINT, CMD and HEALTHCHECK CMD).
func readDockerfile(t *testing.T) *dockerfile {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var cur strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		if cur.Len() > 0 {
			lines = append(lines, cur.String())
		}
		cur.Reset()
	}
	var d *dockerfile
	execForm := func(s string) []string {
		var v []string
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("Dockerfile: %q is not an exec-form (JSON) array: %v", s, err)
		}
		return v
	}
	for _, l := range lines {
		instr, rest, _ := strings.Cut(l, " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToUpper(instr) {
		case "FROM":
			d = &dockerfile{Env: map[string]string{}, Copies: map[string]string{}}
		case "COPY":
			var paths []string
			for _, f := range strings.Fields(rest) {
				if !strings.HasPrefix(f, "--") {
					paths = append(paths, f)
				}
			}
			for _, src := range paths[:len(paths)-1] {
				d.Copies[src] = paths[len(paths)-1]
			}
		case "ENTRYPOINT":
			d.Entrypoint = execForm(rest)
		case "CMD":
			d.Cmd = execForm(rest)
		case "EXPOSE":
			for _, p := range strings.Fields(rest) {
				n, err := strconv.Atoi(strings.TrimSuffix(p, "/tcp"))
				if err != nil {
					t.Fatalf("Dockerfile: EXPOSE %s: %v", p, err)
				}
				d.Expose = append(d.Expose, n)
			}
		case "USER":
			d.User = rest
		case "WORKDIR":
			d.Workdir = rest
		case "ENV":
			k, v, _ := strings.Cut(rest, "=")
			d.Env[k] = v
		case "HEALTHCHECK":
			_, cmd, ok := strings.Cut(rest, " CMD ")
			if !ok {
				t.Fatalf("Dockerfile: HEALTHCHECK without CMD: %s", rest)
			}
			d.Healthcheck = execForm(strings.TrimSpace(cmd))
		}
	}
	if d == nil {
		t.Fatal("Dockerfile: no FROM")
	}
	return d
}

// yagentArgv returns the yagent arguments of an argv that runs yagent,
// perhaps through tini.
func yagentArgv(t *testing.T, argv []string) []string {
	t.Helper()
	if len(argv) > 0 && filepath.Base(argv[0]) == "tini" {
		argv = argv[1:]
		if len(argv) > 0 && argv[0] == "--" {
			argv = argv[1:]
		}
	}
	if len(argv) == 0 || filepath.Base(argv[0]) != "yagent" {
		t.Fatalf("the container runs %q, not yagent", argv)
	}
	return argv[1:]
}

// imageArgv is what the image runs by default.
func imageArgv(t *testing.T, d *dockerfile) []string {
	return yagentArgv(t, append(slices.Clone(d.Entrypoint), d.Cmd...))
}

// podArgv is what the StatefulSet's container runs: command replaces the
// image's ENTRYPOINT, args its CMD (and a command alone drops the CMD).
func podArgv(t *testing.T, d *dockerfile, c *container) []string {
	argv := slices.Clone(d.Entrypoint)
	cmd := d.Cmd
	if c.Command != nil {
		argv, cmd = slices.Clone(c.Command), nil
	}
	if c.Args != nil {
		cmd = c.Args
	}
	return yagentArgv(t, append(argv, cmd...))
}

// flagValue returns the value of --name in args (--name v or --name=v).
func flagValue(args []string, name string) (string, int, bool) {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], i + 1, true
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, i, true
		}
	}
	return "", -1, false
}

func httpPort(t *testing.T, args []string) int {
	t.Helper()
	addr, _, ok := flagValue(args, "http")
	if !ok {
		t.Fatalf("%q: no --http: the container would serve stdio, which no probe or Service reaches", args)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("--http %q: %v", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("--http %q: the port is not a number", addr)
	}
	return n
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// yagentBinary builds cmd/yagent from the source under test, so the test
// never judges a stale bin/yagent. No plugins: serve describes none and is
// ready all the same, which is all the probes need.
func yagentBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "yagent-deploy-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "yagent")
		buildErr = testbuild.Build(testbuild.Host(dir))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

var servingLine = regexp.MustCompile(`serving MCP over HTTP at https?://(\S+)/mcp`)

// serve runs the real `yagent serve` with args, but on port 0 of the same
// host and with the token file at a temporary path, and returns the
// loopback address it listens on.
func serve(t *testing.T, args []string) string {
	t.Helper()
	args = slices.Clone(args)
	addr, i, _ := flagValue(args, "http")
	host, _, _ := net.SplitHostPort(addr)
	args[i] = strings.Replace(args[i], addr, net.JoinHostPort(host, "0"), 1)
	if file, j, ok := flagValue(args, "token-file"); ok {
		tok := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(tok, []byte("deploy-test-token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args[j] = strings.Replace(args[j], file, tok, 1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, yagentBinary(t), args...)
	cmd.Dir = t.TempDir()
	home := t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "YAGENT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	var mu sync.Mutex
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); pw.Close(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	found := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			stderr.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	output := func() string { mu.Lock(); defer mu.Unlock(); return stderr.String() }
	select {
	case a := <-found:
		_, port, _ := net.SplitHostPort(a)
		return net.JoinHostPort("127.0.0.1", port)
	case <-exited:
		<-scanned
		t.Fatalf("yagent %s exited (%v) instead of serving:\n%s", strings.Join(args, " "), waitErr, output())
	case <-time.After(60 * time.Second):
		t.Fatalf("yagent %s: no serving line within 60s:\n%s", strings.Join(args, " "), output())
	}
	return ""
}

// get answers path's status, retrying while the host is not ready yet
// (503, /readyz before the plugins are described) for at most 30s.
func get(t *testing.T, addr, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return resp.StatusCode
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// healthcheckTarget returns the port and path the image's HEALTHCHECK
// asks (a GET over bash's /dev/tcp).
func healthcheckTarget(t *testing.T, d *dockerfile) (int, string) {
	t.Helper()
	script := strings.Join(d.Healthcheck, " ")
	m := regexp.MustCompile(`/dev/tcp/[^/]+/(\d+).*GET (\S+) HTTP`).FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("Dockerfile: HEALTHCHECK %q: no GET over /dev/tcp found", script)
	}
	port, _ := strconv.Atoi(m[1])
	return port, m[2]
}

// TestImageAndPod_ServeRunsWithTheirArgsAndAnswersTheProbes runs the real
// `yagent serve` with the image's default arguments and with the
// StatefulSet's, and asks it each probe path: every flag must be one serve
// accepts (a non-loopback --http without --allow-remote or TLS is refused
// at start), every probe must get 200, not 404, and the image's HEALTHCHECK
// command must succeed against it.
func TestImageAndPod_ServeRunsWithTheirArgsAndAnswersTheProbes(t *testing.T) {
	d := readDockerfile(t)
	_, c := pod(t)
	_, hcPath := healthcheckTarget(t, d)
	cases := []struct {
		name   string
		args   []string
		probes map[string]string
	}{
		{"image", imageArgv(t, d), map[string]string{"HEALTHCHECK": hcPath}},
		{"pod", podArgv(t, d, c), map[string]string{}},
	}
	for what, p := range map[string]*probe{"startupProbe": c.StartupProbe, "readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("k8s/statefulset.yaml: the container has no %s with httpGet", what)
			continue
		}
		cases[1].probes[what] = p.HTTPGet.Path
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args[0] != "serve" {
				t.Fatalf("runs yagent %q, want yagent serve", tc.args)
			}
			addr := serve(t, tc.args)
			for what, path := range tc.probes {
				if code := get(t, addr, path); code != http.StatusOK {
					t.Errorf("%s GET %s: %d, want 200", what, path, code)
				}
			}
			if tc.name == "image" {
				// The HEALTHCHECK itself, against this host's port.
				port, _ := healthcheckTarget(t, d)
				_, live, _ := net.SplitHostPort(addr)
				argv := slices.Clone(d.Healthcheck)
				for i := range argv {
					argv[i] = strings.ReplaceAll(argv[i], fmt.Sprintf("/%d ", port), "/"+live+" ")
				}
				if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
					t.Errorf("HEALTHCHECK %q against a healthy host: %v\n%s", argv, err, out)
				}
			}
			// The token file was read: /mcp without it is refused.
			resp, err := http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("POST /mcp without the token: %d, want 401", resp.StatusCode)
			}
		})
	}
}

// TestImageAndPod_PortsAgree: the port serve listens on is the one the
// image exposes and checks, the container declares, the probes and the
// Service target, and the ingress reaches through the Service.
func TestImageAndPod_PortsAgree(t *testing.T) {
	d := readDockerfile(t)
	_, c := pod(t)
	imagePort := httpPort(t, imageArgv(t, d))
	podPort := httpPort(t, podArgv(t, d, c))
	if !slices.Contains(d.Expose, imagePort) {
		t.Errorf("Dockerfile: serve listens on %d, EXPOSE says %v", imagePort, d.Expose)
	}
	if hc, _ := healthcheckTarget(t, d); hc != imagePort {
		t.Errorf("Dockerfile: HEALTHCHECK asks port %d, serve listens on %d", hc, imagePort)
	}
	named := map[string]int{}
	var declared []int
	for _, p := range c.Ports {
		named[p.Name] = p.ContainerPort
		declared = append(declared, p.ContainerPort)
	}
	if !slices.Contains(declared, podPort) {
		t.Errorf("k8s/statefulset.yaml: serve listens on %d, the container declares %v", podPort, declared)
	}
	resolve := func(where string, port any) int {
		switch p := port.(type) {
		case int:
			return p
		case string:
			n, ok := named[p]
			if !ok {
				t.Errorf("%s: port %q names no container port (%v)", where, p, named)
			}
			return n
		}
		t.Errorf("%s: port %v is neither a number nor a name", where, port)
		return 0
	}
	for what, p := range map[string]*probe{"startupProbe": c.StartupProbe, "readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			continue // the probe test names it
		}
		if got := resolve(what, p.HTTPGet.Port); got != podPort {
			t.Errorf("k8s/statefulset.yaml: %s on port %d, serve listens on %d", what, got, podPort)
		}
	}
	var svc service
	readYAML(t, "service.yaml", &svc)
	byName := map[string]int{}
	byNumber := map[int]bool{}
	for _, p := range svc.Spec.Ports {
		if got := resolve("k8s/service.yaml targetPort", p.TargetPort); got != podPort {
			t.Errorf("k8s/service.yaml: port %s targets %d, serve listens on %d", p.Name, got, podPort)
		}
		byName[p.Name], byNumber[p.Port] = p.Port, true
	}
	var ing ingress
	readYAML(t, "ingress.yaml", &ing)
	for _, r := range ing.Spec.Rules {
		for _, p := range r.HTTP.Paths {
			b := p.Backend.Service
			if b.Name != svc.Metadata.Name {
				t.Errorf("k8s/ingress.yaml: %s goes to Service %q, the Service is %q", p.Path, b.Name, svc.Metadata.Name)
			}
			if _, ok := byName[b.Port.Name]; b.Port.Name != "" && !ok || b.Port.Name == "" && !byNumber[b.Port.Number] {
				t.Errorf("k8s/ingress.yaml: %s goes to Service port %q/%d, which the Service does not have", p.Path, b.Port.Name, b.Port.Number)
			}
		}
	}
}

// TestPod_TokenWorkspaceAndUser: the token file serve reads is the key of
// the mounted Secret the example creates (and the placeholder is never
// applied by kustomize), the workspace volume is the image's WORKDIR, the
// pod runs as the image's user with its HOME mounted, and the ingress
// routes by the header the Streamable HTTP front names sessions with.
func TestPod_TokenWorkspaceAndUser(t *testing.T) {
	d := readDockerfile(t)
	s, c := pod(t)
	if s.Spec.Replicas == nil || *s.Spec.Replicas != 1 {
		t.Errorf("k8s/statefulset.yaml: replicas %v, want 1: a workspace's sessions live in one process", s.Spec.Replicas)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	var sec secret
	readYAML(t, "secret.example.yaml", &sec)
	tokenFile, _, ok := flagValue(podArgv(t, d, c), "token-file")
	if !ok {
		t.Fatal("k8s/statefulset.yaml: serve has no --token-file: it would generate a token no client knows")
	}
	var fromSecret bool
	for _, v := range s.Spec.Template.Spec.Volumes {
		if v.Secret == nil || mounts[v.Name] == "" || v.Secret.SecretName != sec.Metadata.Name || len(v.Secret.Items) > 0 {
			continue
		}
		for key := range sec.StringData {
			if filepath.Join(mounts[v.Name], key) == tokenFile {
				fromSecret = true
			}
		}
	}
	if !fromSecret {
		t.Errorf("k8s/statefulset.yaml: --token-file %s is no key of the Secret %q mounted in the container (mounts %v)", tokenFile, sec.Metadata.Name, mounts)
	}
	if img, _, _ := flagValue(imageArgv(t, d), "token-file"); img != tokenFile {
		t.Errorf("the image reads the token from %s, the pod from %s", img, tokenFile)
	}
	var kust struct {
		Resources []string `yaml:"resources"`
	}
	readYAML(t, "kustomization.yaml", &kust)
	if slices.Contains(kust.Resources, "secret.example.yaml") {
		t.Error("k8s/kustomization.yaml applies secret.example.yaml: every pod would share its placeholder token")
	}
	if len(s.Spec.VolumeClaimTemplates) != 1 || mounts[s.Spec.VolumeClaimTemplates[0].Metadata.Name] != d.Workdir {
		t.Errorf("k8s/statefulset.yaml: the volume claim is not mounted at the image's WORKDIR %s (mounts %v)", d.Workdir, mounts)
	}
	if _, _, ok := flagValue(podArgv(t, d, c), "workspace"); ok {
		t.Error("k8s/statefulset.yaml: --workspace given; the workspace is the WORKDIR the volume is mounted at")
	}
	uid, _, _ := strings.Cut(d.User, ":")
	if ru := s.Spec.Template.Spec.SecurityContext.RunAsUser; ru == nil || strconv.Itoa(*ru) != uid {
		t.Errorf("k8s/statefulset.yaml: runAsUser %v, the image's USER is %s", ru, d.User)
	}
	if home := d.Env["HOME"]; home == "" || !slices.Contains(slices.Collect(maps.Values(mounts)), home) {
		t.Errorf("k8s/statefulset.yaml: HOME %q is not mounted (mounts %v): the root file system is read-only", home, mounts)
	}
	var ing ingress
	readYAML(t, "ingress.yaml", &ing)
	// nginx names a request header $http_<name>, lower case, - as _.
	want := "$http_" + strings.ReplaceAll(strings.ToLower("Mcp-Session-Id"), "-", "_")
	if got := ing.Metadata.Annotations["nginx.ingress.kubernetes.io/upstream-hash-by"]; got != want {
		t.Errorf("k8s/ingress.yaml: upstream-hash-by %q, want %q", got, want)
	}
}

// TestImage_PluginsWhereTheHostLooks: the image puts the plugin binaries
// in the first folder the host searches, the plugins folder beside its
// own binary, and puts that binary on PATH.
func TestImage_PluginsWhereTheHostLooks(t *testing.T) {
	d := readDockerfile(t)
	host, plugins := d.Copies["/src/bin/yagent"], d.Copies["/src/bin/plugins/"]
	if host == "" || plugins == "" {
		t.Fatalf("Dockerfile: no COPY of bin/yagent and bin/plugins/ from the build stage (copies %v)", d.Copies)
	}
	dirs := pluginmgr.DefaultDirs(host)
	if len(dirs) == 0 || dirs[0] != filepath.Clean(plugins) {
		t.Errorf("Dockerfile: plugins copied to %s, but the host at %s looks in %v first", plugins, host, dirs)
	}
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "ln -s "+host+" /usr/local/bin/yagent") {
		t.Errorf("Dockerfile: /usr/local/bin/yagent is not a link to %s; the ENTRYPOINT runs yagent from PATH", host)
	}
}
