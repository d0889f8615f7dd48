package wsroot

// New returns a Resolver on a Roots of its own for a call whose
// workspace is the absolute folder workspace and whose approved external
// paths are approved, as the plugin's calls get one: where the raw path
// exists (raw_linux.go), the tests' resolutions take it. Close it when the
// call ends.
func New(workspace string, approved []string) (*Resolver, error) {
	var s Roots
	return s.New(workspace, approved)
}
