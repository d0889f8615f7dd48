//go:build !linux

package sandbox

import "os/exec"

func probe() Layers {
	why := "this OS has no such kernel layer: commands run without it"
	return Layers{Missing: map[string]string{
		LayerLandlock: why, LayerSeccomp: why, LayerCaps: why, LayerMountNS: why, LayerNetNS: why,
	}}
}

func start(cmd *exec.Cmd, p Policy) (*Started, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Started{Applied: probe()}, nil
}
