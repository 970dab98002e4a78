// Command mkimage builds, unpacks and pushes the lifecyclesim container image without a
// container daemon, using go-containerregistry.
//
//	mkimage build  --binary amd64=bin/linux_amd64/lifecyclesim --binary arm64=bin/linux_arm64/lifecyclesim \
//	               --arch amd64 --version 1.2.3 --out bin/image --tarball bin/lifecyclesim-image.tar --extra-tags latest
//	mkimage unpack --image bin/image --rootfs /tmp/rootfs   # prints the image config (this machine's arch)
//	mkimage check  --image bin/image                        # runs it as a runtime would (root)
//	mkimage push   --image bin/image --tags 1.2.3           # to the registry of --repo (docker's credentials)
//
// build writes an OCI image layout directory: one image per --binary, under one index (a
// multi-architecture image) when there are several; with --tarball, also a docker-archive of
// the --arch image for `docker load` (which takes one architecture per tag).
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image runs as this unprivileged user, which owns the data volume.
const (
	uid     = 65532
	user    = "nonroot"
	dataDir = "data"
	port    = "7575"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

// checkCmd is the check command where the platform has it (linux: chroot and a user switch).
var checkCmd func(args []string, out io.Writer) error

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: mkimage build|unpack|check|push [flags]")
	}
	switch args[0] {
	case "build":
		return build(args[1:], out)
	case "unpack":
		return unpack(args[1:], out)
	case "push":
		return push(args[1:], out, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	case "check":
		if checkCmd == nil {
			return errors.New("check runs on linux only")
		}
		return checkCmd(args[1:], out)
	}
	return fmt.Errorf("unknown command %q: want build, unpack, check or push", args[0])
}

// archBinary is a --binary flag: the linux binary of one architecture.
type archBinary struct{ arch, path string }

func build(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mkimage build", flag.ContinueOnError)
	var binaries []archBinary
	fs.Func("binary", "`[ARCH=]PATH` of a statically linked linux lifecyclesim (ARCH defaults to --arch); once per architecture", func(v string) error {
		arch, path, ok := strings.Cut(v, "=")
		if !ok {
			arch, path = "", v
		}
		binaries = append(binaries, archBinary{arch: arch, path: path})
		return nil
	})
	arch := fs.String("arch", "amd64", "GOARCH of a --binary without ARCH=, and of the docker-archive's image")
	version := fs.String("version", "dev", "image version label")
	repo := fs.String("repo", "ghcr.io/lifecyclesim/lifecyclesim", "image repository, for the tag")
	outDir := fs.String("out", "bin/image", "OCI image layout directory to write (replaced)")
	tarPath := fs.String("tarball", "", "also write a docker-archive of the --arch image here, for docker load")
	extraTags := fs.String("extra-tags", "", "comma-separated further tags of the docker-archive's image (latest: what compose files name)")
	epoch := fs.Int64("source-date-epoch", 0, "timestamp of the files and the image (reproducible builds)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(binaries) == 0 {
		return errors.New("build: --binary is required")
	}
	created := time.Unix(*epoch, 0).UTC()
	images := map[string]v1.Image{}
	var archs []string
	for _, b := range binaries {
		if b.arch == "" {
			b.arch = *arch
		}
		if _, dup := images[b.arch]; dup {
			return fmt.Errorf("build: two --binary flags for %s", b.arch)
		}
		img, err := archImage(b, *version, created)
		if err != nil {
			return fmt.Errorf("build: %s: %w", b.arch, err)
		}
		images[b.arch] = img
		archs = append(archs, b.arch)
	}
	ref, err := name.NewTag(*repo + ":" + strings.ReplaceAll(*version, "+", "-"))
	if err != nil {
		return fmt.Errorf("build: tag: %w", err)
	}
	if err := os.RemoveAll(*outDir); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	p, err := layout.Write(*outDir, empty.Index)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	refName := layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.String()})
	var digest v1.Hash
	if len(images) == 1 {
		img := images[archs[0]]
		if digest, err = img.Digest(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
		err = p.AppendImage(img, refName)
	} else {
		idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
		for _, a := range archs {
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
				Add:        images[a],
				Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: a}},
			})
		}
		if digest, err = idx.Digest(); err != nil {
			return fmt.Errorf("build: %w", err)
		}
		err = p.AppendIndex(idx, refName)
	}
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if *tarPath != "" {
		img, ok := images[*arch]
		if !ok {
			return fmt.Errorf("build: --tarball holds the --arch image, and there is no --binary for %s", *arch)
		}
		refs := map[name.Tag]v1.Image{ref: img}
		for t := range strings.SplitSeq(*extraTags, ",") {
			if t = strings.TrimSpace(t); t == "" {
				continue
			}
			extra, err := name.NewTag(*repo + ":" + t)
			if err != nil {
				return fmt.Errorf("build: tag: %w", err)
			}
			refs[extra] = img
		}
		if err := tarball.MultiWriteToFile(*tarPath, refs); err != nil {
			return fmt.Errorf("build: %w", err)
		}
	}
	fmt.Fprintf(out, "%s %s (linux/%s) in %s\n", ref, digest, strings.Join(archs, ", linux/"), *outDir)
	return nil
}

// archImage is the image of one architecture's binary.
func archImage(b archBinary, version string, created time.Time) (v1.Image, error) {
	bin, err := os.ReadFile(b.path)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfs(bin, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	cf.OS, cf.Architecture = "linux", b.arch
	cf.Config = imageConfig(version)
	return mutate.ConfigFile(img, cf)
}

// imageConfig is how the simulator runs in a container: on every interface (so a published
// port works; set LIFECYCLESIM_TOKENS there), its SQLite file on the /data volume, as a
// non-root user, with a healthcheck that needs no shell.
func imageConfig(version string) v1.Config {
	return v1.Config{
		User:         fmt.Sprintf("%d:%d", uid, uid),
		Entrypoint:   []string{"/lifecyclesim"},
		WorkingDir:   "/" + dataDir,
		ExposedPorts: map[string]struct{}{port + "/tcp": {}},
		Volumes:      map[string]struct{}{"/" + dataDir: {}},
		Env: []string{
			"LIFECYCLESIM_ADDR=0.0.0.0:" + port,
			"LIFECYCLESIM_DB=/" + dataDir + "/lifecyclesim.db",
			"LIFECYCLESIM_LOG_FORMAT=json",
		},
		Healthcheck: &v1.HealthConfig{
			Test:        []string{"CMD", "/lifecyclesim", "healthcheck"},
			Interval:    5 * time.Second,
			Timeout:     3 * time.Second,
			StartPeriod: 5 * time.Second,
			Retries:     3,
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "lifecyclesim",
			"org.opencontainers.image.description": "A lifecycle API simulator: cloud objects with real state machines, for Terraform tests and CI",
			"org.opencontainers.image.source":      "https://github.com/lifecyclesim/terraform-provider-lifecycle",
			"org.opencontainers.image.licenses":    "MPL-2.0",
			"org.opencontainers.image.version":     version,
		},
	}
}

// rootfs is the image's only layer: the binary, the data directory owned by the user, and
// passwd/group files so tools show a name for the uid. No shell, no libc: the binary is static.
func rootfs(bin []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/%s:/sbin/nologin\n", user, uid, uid, user, dataDir)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", user, uid)
	entries := []struct {
		name     string
		mode     int64
		uid      int
		data     []byte
		dir      bool
		typeflag byte
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: dataDir + "/", mode: 0o755, uid: uid, dir: true},
		{name: "lifecyclesim", mode: 0o755, data: bin},
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: mtime, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unpack extracts the image's filesystem into a directory, keeping owners and modes, and prints
// its config, so a test can run the entrypoint the way a container runtime would.
func unpack(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mkimage unpack", flag.ContinueOnError)
	dir := fs.String("image", "bin/image", "OCI image layout directory")
	root := fs.String("rootfs", "", "directory to extract into (must not exist)")
	arch := fs.String("arch", runtime.GOARCH, "the architecture to unpack, of a multi-architecture image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("unpack: --rootfs is required")
	}
	img, err := layoutImage(*dir, *arch)
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	if err := os.Mkdir(*root, 0o755); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	if err := extract(tar.NewReader(rc), *root); err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(cf)
}

// layoutTop is the one image or index an OCI layout directory written by build holds.
func layoutTop(dir string) (v1.ImageIndex, v1.Descriptor, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	if len(m.Manifests) != 1 {
		return nil, v1.Descriptor{}, fmt.Errorf("%s holds %d images or indexes, want 1", dir, len(m.Manifests))
	}
	return idx, m.Manifests[0], nil
}

// layoutImage is the image of arch in a layout directory: its one image, or the image for
// linux/arch of its multi-architecture index.
func layoutImage(dir, arch string) (v1.Image, error) {
	idx, top, err := layoutTop(dir)
	if err != nil {
		return nil, err
	}
	if !top.MediaType.IsIndex() {
		return idx.Image(top.Digest)
	}
	multi, err := idx.ImageIndex(top.Digest)
	if err != nil {
		return nil, err
	}
	m, err := multi.IndexManifest()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch {
			return multi.Image(d.Digest)
		}
		if d.Platform != nil {
			have = append(have, d.Platform.Architecture)
		}
	}
	return nil, fmt.Errorf("%s has no linux/%s image (it has %s): choose one with --arch", dir, arch, strings.Join(have, ", "))
}

// push copies the image or index of a layout directory to --repo under each of --tags, with
// the credentials of opts (docker's config in the binary: `docker login` first).
func push(args []string, out io.Writer, opts ...remote.Option) error {
	fs := flag.NewFlagSet("mkimage push", flag.ContinueOnError)
	dir := fs.String("image", "bin/image", "OCI image layout directory")
	repo := fs.String("repo", "ghcr.io/lifecyclesim/lifecyclesim", "image repository")
	tags := fs.String("tags", "", "comma-separated tags to push (the version)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var names []string
	for t := range strings.SplitSeq(*tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			names = append(names, strings.ReplaceAll(t, "+", "-"))
		}
	}
	if len(names) == 0 {
		return errors.New("push: --tags is required")
	}
	idx, top, err := layoutTop(*dir)
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	for _, t := range slices.Compact(slices.Sorted(slices.Values(names))) {
		ref, err := name.NewTag(*repo + ":" + t)
		if err != nil {
			return fmt.Errorf("push: tag: %w", err)
		}
		if err := pushTo(ref, idx, top, opts...); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
		fmt.Fprintf(out, "pushed %s@%s\n", ref, top.Digest)
	}
	return nil
}

// pushTo writes the layout's top image or index (top, of idx) to ref.
func pushTo(ref name.Tag, idx v1.ImageIndex, top v1.Descriptor, opts ...remote.Option) error {
	if top.MediaType.IsIndex() {
		multi, err := idx.ImageIndex(top.Digest)
		if err != nil {
			return err
		}
		return remote.WriteIndex(ref, multi, opts...)
	}
	img, err := idx.Image(top.Digest)
	if err != nil {
		return err
	}
	return remote.Write(ref, img, opts...)
}

func extract(tr *tar.Reader, root string) error {
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, os.FileMode(h.Mode).Perm()); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode).Perm())
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr) //nolint:gosec // our own image, size known
			if err := errors.Join(err, f.Close()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
		// Sticky bit and owners as in the image (needs root, as a runtime would).
		mode := os.FileMode(h.Mode).Perm()
		if h.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		if err := os.Chmod(target, mode); err != nil {
			return err
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				return err
			}
		}
	}
}
