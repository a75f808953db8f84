//go:build !linux

package rt

import "errors"

var errNoAffinity = errors.New("rt: CPU binding is supported on Linux only")

func allowedCPUs() ([]int, error) { return nil, errNoAffinity }

func pinThread(cpu int) error { return errNoAffinity }
