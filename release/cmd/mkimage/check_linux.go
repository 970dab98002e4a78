package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func init() { checkCmd = check }

// check proves an image works the way a container runtime would run it: it unpacks the image,
// runs the entrypoint chrooted into the root filesystem as the image's user with the image's
// environment, waits for the image's healthcheck command to pass, reads /readyz, and stops the
// simulator with SIGTERM. Only the listen port is overridden (the machine may be shared).
// It needs root, for chroot and to switch users.
func check(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mkimage check", flag.ContinueOnError)
	dir := fs.String("image", "bin/image", "OCI image layout directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("check: needs root (chroot and a user switch, as a container runtime does)")
	}
	work, err := os.MkdirTemp("", "mkimage-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	root := filepath.Join(work, "rootfs")
	var cfgJSON bytes.Buffer
	if err := unpack([]string{"--image", *dir, "--rootfs", root}, &cfgJSON); err != nil {
		return err
	}
	var cf v1.ConfigFile
	if err := json.Unmarshal(cfgJSON.Bytes(), &cf); err != nil {
		return fmt.Errorf("check: config: %w", err)
	}
	c := cf.Config
	fmt.Fprintf(out, "unpacked %s into %s: user %s, entrypoint %v, healthcheck %v, volumes %v\n",
		*dir, root, c.User, c.Entrypoint, c.Healthcheck.Test, keys(c.Volumes))
	entries, _ := os.ReadDir(root)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	fmt.Fprintf(out, "root filesystem: %v (no shell)\n", names)

	uidS, gidS, _ := strings.Cut(c.User, ":")
	uid, err1 := strconv.Atoi(uidS)
	gid, err2 := strconv.Atoi(gidS)
	if err := errors.Join(err1, err2); err != nil || uid == 0 {
		return fmt.Errorf("check: image user %q is not a numeric non-root uid:gid", c.User)
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	env := append(append([]string{}, c.Env...), "LIFECYCLESIM_ADDR=0.0.0.0:"+strconv.Itoa(port))
	attr := &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var logs bytes.Buffer
	sim := exec.CommandContext(ctx, c.Entrypoint[0], append(c.Entrypoint[1:], c.Cmd...)...)
	sim.Dir, sim.Env, sim.SysProcAttr, sim.Stdout, sim.Stderr = c.WorkingDir, env, attr, &logs, &logs
	// exec resolves the path on the host; the chroot makes it the image's.
	sim.Path = c.Entrypoint[0]
	if err := sim.Start(); err != nil {
		return fmt.Errorf("check: start %v: %w", c.Entrypoint, err)
	}
	fmt.Fprintf(out, "started %v as %s (pid %d) on 0.0.0.0:%d\n", c.Entrypoint, c.User, sim.Process.Pid, port)
	stopped := false
	defer func() {
		if !stopped {
			_ = sim.Process.Kill()
			_ = sim.Wait()
		}
	}()

	health := c.Healthcheck.Test
	if len(health) < 2 || health[0] != "CMD" {
		return fmt.Errorf("check: healthcheck %v is not an exec form CMD", health)
	}
	var hcOut []byte
	deadline := time.Now().Add(20 * time.Second)
	for {
		hc := exec.CommandContext(ctx, health[1], health[2:]...)
		hc.Path, hc.Dir, hc.Env, hc.SysProcAttr = health[1], c.WorkingDir, env, attr
		hcOut, err = hc.CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("check: healthcheck %v never passed: %v: %s\nsimulator log:\n%s", health, err, hcOut, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Fprintf(out, "healthcheck %v: exit 0: %s", health, hcOut)

	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	resp, err := http.Get(url) //nolint:noctx // a one-off probe
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	fmt.Fprintf(out, "GET %s from the host: %d %s", url, resp.StatusCode, body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("check: /readyz answered %d", resp.StatusCode)
	}

	_ = sim.Process.Signal(syscall.SIGTERM)
	stopped = true
	if err := sim.Wait(); err != nil {
		return fmt.Errorf("check: the simulator exited with %v after SIGTERM\n%s", err, logs.String())
	}
	fmt.Fprintln(out, "SIGTERM: exited 0")
	for _, v := range c.Env {
		if db, ok := strings.CutPrefix(v, "LIFECYCLESIM_DB="); ok {
			st, err := os.Stat(filepath.Join(root, db))
			if err != nil {
				return fmt.Errorf("check: the store %s was not written: %w", db, err)
			}
			sys, ok := st.Sys().(*syscall.Stat_t)
			if !ok {
				return fmt.Errorf("check: no owner in the stat of %s", db)
			}
			fmt.Fprintf(out, "store %s written by uid %d (%d bytes)\n", db, sys.Uid, st.Size())
		}
	}
	fmt.Fprintf(out, "simulator log:\n%s", logs.String())
	return nil
}

// freePort returns a TCP port of 127.0.0.1 that nothing listens on now: a copy of the main
// module's internal/freeport, which this module cannot import.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("a tcp listener's address %v is not a TCP address", ln.Addr())
	}
	return addr.Port, nil
}

func keys(m map[string]struct{}) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
