//go:build linux

package sandbox

import (
	"testing"
)

func TestProbe_EachLayerPresentOrExplained(t *testing.T) {
	l := Probe()
	for layer, present := range map[string]bool{
		LayerLandlock: l.LandlockABI > 0, LayerSeccomp: l.Seccomp,
		LayerMountNS: l.MountNS, LayerNetNS: l.NetNS,
	} {
		why, missing := l.Missing[layer]
		if present == missing {
			t.Errorf("%s: present %v, Missing %q", layer, present, why)
		}
		if missing && why == "" {
			t.Errorf("%s is missing without a reason", layer)
		}
	}
	if !l.CapDrop {
		t.Error("CapDrop false on Linux")
	}
}

func TestStart_ExecFilterMissingIsReported(t *testing.T) {
	f := newFixture(t)
	p := f.policy()
	p.Exec = true
	_, code, st := run(t, p, `true`)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if st.Listener == nil && st.Applied.Missing[LayerSeccomp] == "" {
		t.Error("no listener and no word on the exec layer")
	}
	if st.Listener != nil {
		st.Listener.Close()
	}
}
