package main

import "path/filepath"

// absDevDir makes --plugin-dev-dir absolute. It was typed by the user:
// relative to where they are, never to the workspace (a relative
// plugin_dev_dir is refused as it would name a folder of each workspace).
func absDevDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir // refused by the config check as not absolute
	}
	return abs
}
