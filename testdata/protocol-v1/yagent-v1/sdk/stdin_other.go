//go:build !unix

package sdk

func detachStdin() error { return nil }
