package toolspec

import "github.com/yagent/yagent/sdk"

func path(role sdk.Role) map[string]sdk.Role { return map[string]sdk.Role{"path": role} }

// staticSpecs is the registry's table. Adding a tool here binds its name to
// its family: no other plugin may serve it.
var staticSpecs = []Static{
	// Host-native flow and meta tools: Hot, never demoted.
	{Name: LoadTool, Family: FamilyHost, Effect: sdk.EffectFlow, Tier: Hot, ReadOnly: true,
		Brief: "Load the schemas of deferred tools by name or keyword."},
	{Name: AgentExit, Family: FamilyHost, Effect: sdk.EffectFlow, Tier: Hot,
		Brief: "Finish the task and hand back a summary."},
	{Name: AskUserForHelp, Family: FamilyHost, Effect: sdk.EffectFlow, Tier: Hot,
		Brief: "Ask the user a question and wait for the answer."},

	// fs
	{Name: "read_file", Family: FamilyFS, Effect: sdk.EffectRead, Roles: path(sdk.RolePathRead), Tier: Warm, ReadOnly: true,
		Brief: "Read a window of lines from a text file."},
	{Name: "write_file", Family: FamilyFS, Effect: sdk.EffectWrite, Roles: path(sdk.RolePathWrite), Tier: Warm,
		Brief: "Create or overwrite a file."},
	{Name: "search_replace_in_file", Family: FamilyFS, Effect: sdk.EffectWrite, Roles: path(sdk.RolePathWrite), Tier: Warm,
		Brief: "Replace one exact block of text in a file."},
	{Name: "multi_edit", Family: FamilyFS, Effect: sdk.EffectWrite, Roles: path(sdk.RolePathWrite), Tier: Warm,
		Brief: "Apply several replacements to one file, all or nothing."},
	{Name: "list_dir", Family: FamilyFS, Effect: sdk.EffectRead, Roles: path(sdk.RolePathRead), Tier: Warm, ReadOnly: true,
		Brief: "List a directory tree to a given depth."},

	// shell
	{Name: "run_bash", Family: FamilyShell, Effect: sdk.EffectExec,
		Roles: map[string]sdk.Role{"command": sdk.RoleCommand, "is_dangerous": sdk.RoleDangerFlag}, Tier: Warm,
		Brief: "Run a bash command in the workspace."},
	{Name: "shell_wait", Family: FamilyShell, Effect: sdk.EffectNone, Tier: Warm, ReadOnly: true,
		Brief: "Wait for a shell task and collect its output."},
	// write_stdin has no role: what its input means depends on the program
	// reading the terminal when it is typed, which only the plugin sees. It
	// puts the text to the host then (sdk.ApprovalStdin), before typing it.
	{Name: "write_stdin", Family: FamilyShell, Effect: sdk.EffectExec, Tier: Warm,
		Brief: "Send text or keys to a running shell task."},
	{Name: "shell_cancel", Family: FamilyShell, Effect: sdk.EffectExec, Tier: Warm,
		Brief: "Stop a shell task."},
	{Name: "shell_tasks", Family: FamilyShell, Effect: sdk.EffectNone, Tier: Cold, ReadOnly: true,
		Brief: "List shell tasks."},

	// search
	{Name: "grep", Family: FamilySearch, Effect: sdk.EffectRead, Roles: path(sdk.RolePathRead), Tier: Warm, ReadOnly: true,
		Brief: "Search file contents with a regular expression."},
	{Name: "search_files", Family: FamilySearch, Effect: sdk.EffectRead, Roles: path(sdk.RolePathRead), Tier: Warm, ReadOnly: true,
		Brief: "Find files by glob pattern."},
	{Name: "code_outline", Family: FamilySearch, Effect: sdk.EffectRead, Roles: path(sdk.RolePathRead), Tier: Cold, ReadOnly: true,
		Brief: "A source file's definitions."},
	{Name: "find_symbol", Family: FamilySearch, Effect: sdk.EffectRead, Tier: Cold, ReadOnly: true,
		Brief: "Where a name is defined."},
	{Name: "find_references", Family: FamilySearch, Effect: sdk.EffectRead, Tier: Cold, ReadOnly: true,
		Brief: "Where a name is used."},
	{Name: "web_fetch", Family: FamilySearch, Effect: sdk.EffectNetwork, Roles: map[string]sdk.Role{"url": sdk.RoleURL}, Tier: Cold, ReadOnly: true,
		Brief: "Fetch a URL as Markdown."},

	// browser: all Serial (one CDP connection and current tab per session), never ReadOnly.
	{Name: "browser_navigate", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Roles: map[string]sdk.Role{"url": sdk.RoleURL}, Tier: Cold, Serial: true,
		Brief: "Open a URL."},
	{Name: "browser_navigate_back", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Go back a page."},
	{Name: "browser_snapshot", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "The page as a tree with element refs."},
	{Name: "browser_click", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Click an element by ref or selector."},
	{Name: "browser_type", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Type text into an element."},
	{Name: "browser_press_key", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Press a key in the page."},
	{Name: "browser_hover", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Hover over an element."},
	{Name: "browser_select_option", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Select options in a dropdown."},
	{Name: "browser_take_screenshot", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Screenshot the page."},
	{Name: "browser_evaluate", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true, AlwaysAsk: true,
		Brief: "Evaluate JavaScript in the page."},
	{Name: "browser_tabs", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Roles: map[string]sdk.Role{"url": sdk.RoleURL}, Tier: Cold, Serial: true,
		Brief: "List, open, select or close tabs."},
	{Name: "browser_wait_for", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Wait for text or a time."},
	{Name: "browser_console_messages", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "The tab's console messages."},
	{Name: "browser_close", Family: FamilyBrowser, Effect: sdk.EffectBrowser, Tier: Cold, Serial: true,
		Brief: "Close the browser."},

	// cognitive
	{Name: "think", Family: FamilyCognitive, Effect: sdk.EffectNone, Tier: Warm, ReadOnly: true,
		Brief: "Think out loud without acting."},
	{Name: "update_plan", Family: FamilyCognitive, Effect: sdk.EffectNone, Tier: Warm,
		Brief: "Record the plan and each step's status."},
	{Name: "todo_write", Family: FamilyCognitive, Effect: sdk.EffectNone, Tier: Cold,
		Brief: "Write the todo list."},
	{Name: "todo_read", Family: FamilyCognitive, Effect: sdk.EffectNone, Tier: Cold, ReadOnly: true,
		Brief: "Read the todo list."},
	{Name: "use_skill", Family: FamilyCognitive, Effect: sdk.EffectRead, Tier: Cold, ReadOnly: true,
		Brief: "Load a skill by name."},
}
