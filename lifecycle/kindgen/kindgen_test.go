package kindgen

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// builtinKinds are the built-in kinds, parsed once.
var builtinKinds = lifecycle.Builtin().Kinds()

// loadSet writes the set's file and loads it next to the built-in kinds, as the simulator's
// --kinds and the provider's LIFECYCLE_KINDS do (lifecyclesim check is the same load with a
// report: TestCheckAgrees).
func loadSet(t *testing.T, dir string, seed uint64) ([]byte, error) {
	t.Helper()
	b, err := ForSeed(seed).YAML("kindgen seed " + strconv.FormatUint(seed, 10))
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	file := filepath.Join(dir, "seed-"+strconv.FormatUint(seed, 10)+".yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	reg := lifecycle.NewRegistry()
	if err := reg.Add(builtinKinds...); err != nil {
		t.Fatal(err)
	}
	_, err = reg.LoadFiles(file)
	return b, err
}

// checkSet writes the set's file and checks it as `lifecyclesim check` does; it returns the
// file and the checker's output.
func checkSet(t *testing.T, dir string, seed uint64) (string, []byte, bool) {
	t.Helper()
	s := ForSeed(seed)
	b, err := s.YAML("kindgen seed " + strconv.FormatUint(seed, 10))
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	file := filepath.Join(dir, "seed-"+strconv.FormatUint(seed, 10)+".yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ok := lifecycle.CheckFiles(&out, file)
	return file, append(out.Bytes(), "\n---\n"+string(b)...), ok
}

// TestGeneratedFilesLoad: every file of 500 seeds (100 under the race detector) loads next to
// the built-in kinds, exactly as --kinds loads it.
func TestGeneratedFilesLoad(t *testing.T) {
	dir := t.TempDir()
	seeds := uint64(500)
	if raceEnabled {
		seeds = 100
	}
	for seed := range seeds {
		if b, err := loadSet(t, dir, seed); err != nil {
			t.Fatalf("seed %d does not load (replay: ForSeed(%d)): %v\n%s", seed, seed, err, b)
		}
	}
}

// TestCheckAgrees: lifecyclesim check (CheckFiles) passes the fixed seeds' files, and fails a
// broken one, so the load above is what check says.
func TestCheckAgrees(t *testing.T) {
	dir := t.TempDir()
	for _, seed := range FixedSeeds {
		if _, out, ok := checkSet(t, dir, seed); !ok {
			t.Errorf("lifecyclesim check fails seed %d:\n%s", seed, out)
		}
	}
	s := ForSeed(FixedSeeds[0])
	s.Kinds[0].Create.To = "NOWHERE"
	b, err := s.YAML("")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if lifecycle.CheckFiles(&out, file) || !bytes.Contains(out.Bytes(), []byte("NOWHERE")) {
		t.Errorf("lifecyclesim check of a create to an unknown state: %s", out.String())
	}
}

// TestRefusingParentNeedsDeletion: the generator gives a subject without deletion a parent
// that cascades, because lifecyclesim check refuses `delete: refuse` over it (its parent could
// never be deleted); turned to refuse, check says so at parent.delete.
func TestRefusingParentNeedsDeletion(t *testing.T) {
	dir := t.TempDir()
	for seed := range uint64(200) {
		s := ForSeed(seed)
		k, _ := s.Kind(s.Subject)
		if k.Parent == nil || k.Deletion != nil {
			continue
		}
		if k.Parent.Delete != "cascade" {
			t.Fatalf("seed %d: the parent of %s (no deletion) has delete: %s, want cascade", seed, k.Name, k.Parent.Delete)
		}
		check := func(policy string) (bool, string) {
			k.Parent.Delete = policy
			b, err := s.YAML("")
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, policy+".yaml")
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			ok := lifecycle.CheckFiles(&out, file)
			return ok, out.String()
		}
		if ok, out := check("refuse"); ok || !strings.Contains(out, "parent.delete: `delete: refuse` keeps a "+k.Parent.Kind) {
			t.Errorf("lifecyclesim check of seed %d with delete: refuse over %s (no deletion):\n%s", seed, k.Name, out)
		}
		// The fixes the message names for the parent's policy pass the check.
		for _, fix := range []string{"cascade", "detach"} {
			if ok, out := check(fix); !ok {
				t.Errorf("lifecyclesim check of seed %d with the advised delete: %s:\n%s", seed, fix, out)
			}
		}
		return
	}
	t.Fatal("no seed below 200 draws a subject without deletion under a parent")
}

// TestRefusingLinkNeedsRemoval: the generator draws `delete: refuse` on a link only from a
// subject whose objects can go, because lifecyclesim check refuses it from objects that never
// go and whose required or immutable link nothing clears (the linked object could never be
// deleted); turned to refuse, check says so at links[0].delete, and the fixes it names pass.
func TestRefusingLinkNeedsRemoval(t *testing.T) {
	dir := t.TempDir()
	for seed := range uint64(500) {
		s := ForSeed(seed)
		k, _ := s.Kind(s.Subject)
		if len(k.Links) == 0 || len(k.RemovingActions()) > 0 || len(k.Actions) == 0 {
			continue
		}
		if f, _ := k.Field(k.Links[0].Field); !f.Required && !f.Immutable {
			continue
		}
		if s.Uses(LinkDeleteRefuse) || k.Links[0].Refuses() {
			t.Fatalf("seed %d: the link of %s (its objects never go) refuses its object's delete", seed, k.Name)
		}
		check := func(name string, edit func(l *lifecycle.Link)) (bool, string) {
			l := &k.Links[0]
			saved := *l
			defer func() { *l = saved }()
			l.Delete = lifecycle.LinkRefuse
			edit(l)
			b, err := s.YAML("")
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, name+".yaml")
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			ok := lifecycle.CheckFiles(&out, file)
			return ok, out.String()
		}
		ok, out := check("refuse", func(*lifecycle.Link) {})
		if want := "links[0].delete: `delete: refuse` keeps a linked " + k.Links[0].Kind + " from being deleted"; ok || !strings.Contains(out, want) {
			t.Errorf("lifecyclesim check of seed %d with delete: refuse on %s's link (its objects never go):\n%s\nwant %q", seed, k.Name, out, want)
		}
		if !regexp.MustCompile(`:[0-9]+: `).MatchString(out) {
			t.Errorf("lifecyclesim check of seed %d: the refusal names no line:\n%s", seed, out)
		}
		// The fixes the message names for the link pass the check.
		fixes := map[string]func(l *lifecycle.Link){
			"cleared_by": func(l *lifecycle.Link) { l.ClearedBy = lifecycle.Names{k.Actions[0].Name} },
			"no-refuse":  func(l *lifecycle.Link) { l.Delete = "" },
		}
		for name, fix := range fixes {
			if ok, out := check(name, fix); !ok {
				t.Errorf("lifecyclesim check of seed %d with the advised fix %s:\n%s", seed, name, out)
			}
		}
		return
	}
	t.Fatal("no seed below 500 draws a subject without removal whose link is required or immutable")
}

// TestGenerateReproducible: a seed always gives the same file, and different seeds different
// files.
func TestGenerateReproducible(t *testing.T) {
	a, _ := ForSeed(42).YAML("")
	b, _ := ForSeed(42).YAML("")
	c, _ := ForSeed(43).YAML("")
	if !bytes.Equal(a, b) {
		t.Errorf("ForSeed(42) gave two different files:\n%s\n---\n%s", a, b)
	}
	if bytes.Equal(a, c) {
		t.Errorf("ForSeed(42) and ForSeed(43) gave the same file")
	}
}

// TestFixedSeedsCoverEveryConstruct: the seeds make test runs through Terraform use every
// construct of the format at least once; a construct no seed draws fails the test.
func TestFixedSeedsCoverEveryConstruct(t *testing.T) {
	if missing := Missing(FixedSeeds); len(missing) > 0 {
		t.Errorf("FixedSeeds %v never draw %v: add seeds that do (go test ./lifecycle/kindgen -run TestCoverSeeds -v lists some)", FixedSeeds, missing)
	}
	// Every construct is drawn by some seed at all (a construct the generator never uses
	// would be listed in Constructs for nothing).
	var all []uint64
	for seed := range uint64(500) {
		all = append(all, seed)
	}
	if missing := Missing(all); len(missing) > 0 {
		t.Errorf("no seed of 0-499 draws %v", missing)
	}
}

// TestMissing: the coverage check names exactly the constructs no set uses.
func TestMissing(t *testing.T) {
	s := ForSeed(FixedSeeds[0])
	got := Missing([]uint64{FixedSeeds[0]})
	if len(got)+len(s.Used) != len(Constructs) {
		t.Errorf("Missing(%d) = %v with %d used, want the %d others", FixedSeeds[0], got, len(s.Used), len(Constructs)-len(s.Used))
	}
	for _, c := range got {
		if s.Uses(c) {
			t.Errorf("Missing lists %s, which seed %d uses", c, FixedSeeds[0])
		}
	}
}

// TestCoverSeeds prints a small set of seeds covering every construct (greedy), to refresh
// FixedSeeds after a change of the generator.
func TestCoverSeeds(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("run with -v to print a covering seed set")
	}
	t.Logf("a covering set: %v", Cover(500))
}
