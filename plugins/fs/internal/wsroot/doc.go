// Package wsroot turns the path a tool call names into a file opened
// through os.Root: the workspace's, the session's own temp folder's
// (Resolver.SetTemp), or an approved external path's (rooted at its parent
// folder). Symlinks are resolved component by component, so a link inside
// pointing inside is followed to its real target, and one leading outside —
// or a parent folder swapped for such a link — is refused. A link's target
// is read as the session's commands read it: under a temp folder the
// session's own stands for, in that one (sdk.TempFolder.Map).
//
// On Linux the kept workspace root is also read by raw system calls where
// the kernel can answer without waiting (raw_linux.go; docs/ARCHITECTURE.md,
// "Wire"); whatever they refuse goes to os.Root.
package wsroot
