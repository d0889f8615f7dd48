package main

import (
	"errors"
	"runtime"
)

// hostOS is the system the host runs on; a seam the tests replace.
var hostOS = runtime.GOOS

// errWindows refuses every command on Windows: the host kills a command's
// process group at its timeout, runs commands under bash and gives them
// terminals, none of which it does there yet.
var errWindows = errors.New("yagent does not run on Windows yet: commands need process groups, bash and terminals it has no Windows code for. " +
	"Run it on Linux (WSL 2 works) or macOS. A plugin built with the sdk does build for Windows")

// checkPlatform says why the host cannot run on this system, nil when it can.
func checkPlatform() error {
	if hostOS == "windows" {
		return errWindows
	}
	return nil
}
