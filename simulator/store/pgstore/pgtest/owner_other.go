//go:build !linux

package pgtest

import "syscall"

// owner is the user a cluster runs as: elsewhere than on Linux, the tests' own (which must
// not be root: initdb refuses it).
type owner struct{}

func clusterOwner() (owner, error) { return owner{}, nil }

func (owner) chown(string) error { return nil }

func (owner) procAttr() *syscall.SysProcAttr { return nil }
