package guard

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/sdk"
)

// TestWorkspaceGuard_KnowsNoPasses: passes belong to the authorization loop
// alone. A session that holds every pass still gets the guard's ask, so
// the one place that turns asks into allow is host/authz.
func TestWorkspaceGuard_KnowsNoPasses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sess := session.New("all")
	sess.GrantAll()
	sp := sdk.Spec{Name: "write_it", Effect: sdk.EffectWrite, Roles: writeRoles}
	d := f.guard(nil).Check(t.Context(), adapter.GuardRequest{Spec: sp, Args: readArgs(filepath.Join(f.other, "x")), Session: sess, Trusted: true})
	if d.Action != adapter.Ask {
		t.Fatalf("Check with every session pass = %v (%s), want ask: the guard must not apply passes", d.Action, d.Reason)
	}
}

// TestGuard_ImportsNoDecisionOwner: the guard decides allow / ask / deny
// and nothing more; it must not reach into the authorization loop or the
// dispatcher.
func TestGuard_ImportsNoDecisionOwner(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"github.com/yagent/yagent/host/authz", "github.com/yagent/yagent/call/bus"}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(forbidden, p) {
				t.Errorf("%s imports %s: passes and questions belong to host/authz", name, p)
			}
		}
	}
}
