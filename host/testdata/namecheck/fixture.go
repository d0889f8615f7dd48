// Package namecheck is the fixture of TestNameCheckCatchesEveryForm: each
// line that decides by a tool's name says so in a "want" comment; the others
// are uses the check must leave alone.
package namecheck

import (
	"fmt"
	"strings"

	"github.com/yagent/yagent/call/toolspec"
)

const browserPrefix = "browser_"

const exitName = toolspec.AgentExit

const shellPrefix = "she" + "ll_"

var byName = map[string]bool{
	toolspec.LoadTool: true, // want: map key
	browserPrefix:     true, // want: map key
	"fs":              true,
}

func decide(name string, m map[string]int) {
	_ = name == toolspec.AgentExit             // want: ==
	_ = exitName != name                       // want: !=
	_ = name[:len(shellPrefix)] == shellPrefix // want: ==
	_ = name == "find_"                        // want: ==
	switch name {
	case toolspec.AskUserForHelp: // want: case
	case browserPrefix, "web_fetch": // want: case, case
	}
	_ = strings.HasPrefix(name, browserPrefix)     // want: strings call
	_ = strings.HasPrefix(name, "browser"+"_")     // want: strings call
	_ = strings.EqualFold(toolspec.LoadTool, name) // want: strings call
	_, _ = strings.CutPrefix(name, "write_")       // want: strings call
	_ = m[exitName]                                // want: index
	m["todo_"] = 1                                 // want: index
	_ = []string{"read_file"}                      // want: list element
	_ = [...]string{1: exitName}                   // want: list element
	_ = fmt.Sprint("read_file")                    // want: literal
	_ = "grep"                                     //yagent:not-a-tool-name the program
}

func allowed(name string, st toolspec.Static, m map[string]int) {
	_, _ = toolspec.Lookup(name)
	_ = fmt.Errorf("%s failed", toolspec.LoadTool)
	_ = st.Family == toolspec.FamilyBrowser
	_ = name == "browser"
	_ = strings.HasPrefix(name, "x_")
	_ = m[name]
	_ = toolspec.Static{Name: toolspec.LoadTool}
	_ = []string{toolspec.FamilyBrowser, "x_"}
	_ = strings.Contains(name, "_")
	switch st.Family {
	case toolspec.FamilyShell:
	}
	_ = byName
}
