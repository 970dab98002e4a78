package pgtest

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// owner is the user a cluster runs as: the postgres user when the tests run as root (initdb
// refuses root), else the tests' own user (cred nil).
type owner struct {
	cred *syscall.Credential
}

func clusterOwner() (owner, error) {
	if os.Geteuid() != 0 {
		return owner{}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return owner{}, fmt.Errorf("as root, the cluster runs as the postgres user (initdb refuses root), which Debian's postgresql package creates: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return owner{}, fmt.Errorf("postgres user: uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return owner{}, fmt.Errorf("postgres user: gid %q: %w", u.Gid, err)
	}
	return owner{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}, nil
}

// chown gives the owner a file or directory the tests made.
func (o owner) chown(path string) error {
	if o.cred == nil {
		return nil
	}
	return os.Chown(path, int(o.cred.Uid), int(o.cred.Gid))
}

// procAttr runs a process as the owner, and kills it when the test binary dies (a test that
// times out or is killed leaves no postgres behind).
func (o owner) procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: o.cred, Pdeathsig: syscall.SIGKILL}
}
