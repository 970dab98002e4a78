package main

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestMultiArchBuildAndPush: build makes one image per architecture under one index, unpack
// picks an architecture's, and push puts the index in a registry under the version's tag,
// where a client finds the image of each platform with its own binary.
func TestMultiArchBuildAndPush(t *testing.T) {
	dir := t.TempDir()
	bins := map[string][]byte{"amd64": []byte("amd64 lifecyclesim"), "arm64": []byte("arm64 lifecyclesim")}
	args := []string{"build", "--arch", "amd64", "--version", "1.2.3", "--out", filepath.Join(dir, "image"),
		"--tarball", filepath.Join(dir, "image.tar"), "--extra-tags", "latest"}
	for arch, b := range bins {
		p := filepath.Join(dir, arch)
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--binary", arch+"="+p)
	}
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("mkimage %s: %v", strings.Join(args, " "), err)
	}

	for arch, want := range bins {
		img, err := layoutImage(filepath.Join(dir, "image"), arch)
		if err != nil {
			t.Fatalf("layoutImage(%s): %v", arch, err)
		}
		if got := fileOf(t, mutate.Extract(img), "lifecyclesim"); !bytes.Equal(got, want) {
			t.Errorf("the linux/%s image's /lifecyclesim = %q, want %q", arch, got, want)
		}
	}
	if _, err := layoutImage(filepath.Join(dir, "image"), "s390x"); err == nil || !strings.Contains(err.Error(), "no linux/s390x image") {
		t.Errorf("layoutImage(s390x) error = %v, want no linux/s390x image", err)
	}

	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	repo := strings.TrimPrefix(srv.URL, "http://") + "/lifecyclesim/lifecyclesim"
	out.Reset()
	if err := run([]string{"push", "--image", filepath.Join(dir, "image"), "--repo", repo, "--tags", "1.2.3"}, &out); err != nil {
		t.Fatalf("mkimage push: %v", err)
	}
	ref, err := name.NewTag(repo+":1.2.3", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("reading the pushed index %s: %v", ref, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != d.Platform.Architecture || cf.Config.Labels["org.opencontainers.image.version"] != "1.2.3" {
			t.Errorf("the %s image's config says %s, version %q; want its platform's and 1.2.3",
				d.Platform, cf.Architecture, cf.Config.Labels["org.opencontainers.image.version"])
		}
		if got := fileOf(t, mutate.Extract(img), "lifecyclesim"); !bytes.Equal(got, bins[d.Platform.Architecture]) {
			t.Errorf("the pushed %s image's /lifecyclesim = %q, want %q", d.Platform, got, bins[d.Platform.Architecture])
		}
	}
	slices.Sort(platforms)
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("the pushed index's platforms = %v, want %v", platforms, want)
	}
}

// fileOf returns a file of a flattened image filesystem.
func fileOf(t *testing.T, rc io.ReadCloser, name string) []byte {
	t.Helper()
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("no %s in the image: %v", name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}
