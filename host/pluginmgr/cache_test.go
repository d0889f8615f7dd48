package pluginmgr

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/remote"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

func TestShaIndex_HashesOnlyChangedFiles(t *testing.T) {
	t.Parallel()
	dir, cache := t.TempDir(), t.TempDir()
	bin := fakeBinary(t, dir, "x", 0o755)
	hashes := 0
	hash := func(p string) (string, error) { hashes++; return policy.SumFile(p) }

	idx := loadIndex(cache)
	s1, _, err := idx.sum(bin, hash, agedClock)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.save(cache); err != nil {
		t.Fatal(err)
	}
	idx = loadIndex(cache) // as a new process would
	if s2, _, _ := idx.sum(bin, hash, agedClock); s2 != s1 || hashes != 1 {
		t.Fatalf("unchanged file: sum %s (first %s), %d hashes; want the memoized sum and 1 hash", s2, s1, hashes)
	}

	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho changed\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(bin, later, later); err != nil {
		t.Fatal(err)
	}
	s3, _, err := idx.sum(bin, hash, agedClock)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := policy.SumFile(bin)
	if s3 != want || s3 == s1 || hashes != 2 {
		t.Errorf("changed file: sum %s, want %s (new), after 2 hashes (got %d)", s3, want, hashes)
	}
}

func TestSpecCache_RoundTripAndRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sum := strings.Repeat("ab", 32)
	d := remote.Description{Name: "x", Version: "1", ProtocolVersion: sdk.ProtocolVersion, Specs: []sdk.Spec{{
		Name: "t", Description: "d", InputSchema: json.RawMessage(`{ "type": "object", "description": "<a & b>" }`), Effect: sdk.EffectRead,
		Roles: map[string]sdk.Role{"path": sdk.RolePathRead},
	}}}
	if err := storeSpecs(dir, sum, d); err != nil {
		t.Fatal(err)
	}
	got, ok := loadSpecs(dir, sum)
	if !ok || !reflect.DeepEqual(got, d) {
		t.Fatalf("loadSpecs: %+v, %v; want %+v", got, ok, d)
	}
	other := "cd" + sum[2:]
	b, _ := os.ReadFile(filepath.Join(dir, sum+".json"))
	if err := os.WriteFile(filepath.Join(dir, other+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := loadSpecs(dir, other); ok {
		t.Error("loadSpecs accepted a file recording another sum")
	}
	if _, ok := loadSpecs(dir, "../"+sum); ok {
		t.Error("loadSpecs accepted a sum that is not a sha256")
	}
}
