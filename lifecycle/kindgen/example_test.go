package kindgen_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle/kindgen"
)

// A seed gives the same kinds every time: here a tram kind living under a generated relay.
func ExampleForSeed() {
	s := kindgen.ForSeed(99)
	fmt.Println(s.Subject, s.Parent, s.Uses(kindgen.ParentKind))
	// Output: tram relay true
}

// Generate draws from any *rand.Rand; its YAML is a kind file lifecyclesim --kinds loads.
func ExampleGenerate() {
	s := kindgen.Generate(rand.New(rand.NewPCG(1, 2)))
	b, err := s.YAML("a generated kind file")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b[:len("# a generated kind file\nkinds:")]))
	// Output:
	// # a generated kind file
	// kinds:
}
