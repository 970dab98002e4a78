// Command mkimage builds and unpacks the lifecyclesim container image without a container
// daemon, using go-containerregistry.
//
//	mkimage build  --binary bin/linux_amd64/lifecyclesim --version 1.2.3 --out bin/image \
//	               --tarball bin/lifecyclesim-image.tar --extra-tags latest
//	mkimage unpack --image bin/image --rootfs /tmp/rootfs   # prints the image config
//	mkimage check  --image bin/image                        # runs it as a runtime would (root)
//
// build writes an OCI image layout directory (push it with `crane push --index`, or copy it
// with skopeo/podman) and, with --tarball, a docker-archive for `docker load`.
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
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
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
		return errors.New("usage: mkimage build|unpack|check [flags]")
	}
	switch args[0] {
	case "build":
		return build(args[1:], out)
	case "unpack":
		return unpack(args[1:], out)
	case "check":
		if checkCmd == nil {
			return errors.New("check runs on linux only")
		}
		return checkCmd(args[1:], out)
	}
	return fmt.Errorf("unknown command %q: want build, unpack or check", args[0])
}

func build(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("mkimage build", flag.ContinueOnError)
	binary := fs.String("binary", "", "statically linked linux lifecyclesim binary")
	arch := fs.String("arch", "amd64", "GOARCH of the binary")
	version := fs.String("version", "dev", "image version label")
	repo := fs.String("repo", "ghcr.io/lifecyclesim/lifecyclesim", "image repository, for the tag")
	outDir := fs.String("out", "bin/image", "OCI image layout directory to write (replaced)")
	tarPath := fs.String("tarball", "", "also write a docker-archive here, for docker load")
	extraTags := fs.String("extra-tags", "", "comma-separated further tags of the docker-archive's image (latest: what compose files name)")
	epoch := fs.Int64("source-date-epoch", 0, "timestamp of the files and the image (reproducible builds)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" {
		return errors.New("build: --binary is required")
	}
	bin, err := os.ReadFile(*binary)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	created := time.Unix(*epoch, 0).UTC()
	layerTar, err := rootfs(bin, created)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return fmt.Errorf("build: layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	cf.OS, cf.Architecture = "linux", *arch
	cf.Config = imageConfig(*version)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return fmt.Errorf("build: %w", err)
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
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.String(),
	})); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if *tarPath != "" {
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
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	fmt.Fprintf(out, "%s %s (linux/%s) in %s\n", ref, digest, *arch, *outDir)
	return nil
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("unpack: --rootfs is required")
	}
	idx, err := layout.ImageIndexFromPath(*dir)
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("unpack: %w", err)
	}
	if len(m.Manifests) != 1 {
		return fmt.Errorf("unpack: %s holds %d images, want 1", *dir, len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
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
