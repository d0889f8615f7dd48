//go:build !unix

package pluginmgr

import "errors"

var errNoGroups = errors.New("process groups are not supported on this system")

func checkGroup(int) error { return errNoGroups }

func killGroup(int) error { return errNoGroups }
