package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// One message per situation: the refresh warning, the plan and the apply error about an object
// in an error state all say what the next apply does with it and what the user runs, from
// kindConfig.errorAdvice. The state-machine guide lists them.

// repairActions are the user actions that take an object out of the error state state to a
// static state that is not an error (a cloudlet's fix).
func repairActions(k *lifecycle.Kind, state string) []string {
	var out []string
	for _, name := range k.Allowed(state, false) {
		a, ok := k.Action(name)
		if ok && isRepair(k, a) {
			out = append(out, name)
		}
	}
	return out
}

// errorAdvice says what the next terraform apply does with an object of kind k in the error
// state state whose resource asks for desired, and what the user runs: the provider leaves a
// held state for its repair, a time-driven kind for a replacement, and otherwise walks the
// object back or replaces it.
func (c kindConfig) errorAdvice(k *lifecycle.Kind, state, desired string) string {
	if slices.Contains(c.holds, state) {
		// heldStates holds only states a repair leaves.
		repairs := repairActions(k, state)
		return fmt.Sprintf("The provider leaves the %s in %s for you to repair: run its %s action from Terraform "+
			"(a lifecycle_action resource with kind = %q and action = %q), then apply again. Changes that need it "+
			"elsewhere fail until then.", k.Name, state, quoted(repairs), k.Name, repairs[0])
	}
	if c.timeDriven {
		// Time drives the kind: nothing walks it out; a new one starts over.
		return "Terraform keeps it in the state and plans no change: replace it with terraform apply -replace=ADDRESS, or remove it."
	}
	if desired == "" || desired == state {
		return ""
	}
	if route, err := k.Route(state, "", desired, false); err == nil {
		return fmt.Sprintf("The next terraform apply brings it back to %s: it runs %s.", desired,
			strings.Join(route.Actions(), ", then "))
	}
	if newObjectReaches(k, desired) {
		return fmt.Sprintf("No action leads from %s to %s, so the next terraform apply replaces the %s (the plan "+
			"shows the replacement and why).", state, desired, k.Name)
	}
	return fmt.Sprintf("No action leads from %s to %s.", state, desired)
}

// failureText is what an object in an error state records about its failure: its last error,
// or, for an object made of members, its failed members' ("" when neither says anything).
func (r *kindResource) failureText(ctx context.Context, o *client.Object) string {
	if le := lastError(o); le != "" {
		return le
	}
	if fd, ok := r.cfg.family.(failureDescriber); ok && r.data != nil {
		return fd.failures(ctx, r.data, o)
	}
	return ""
}

// failureDescriber is a memberHooks that can name what failed among an object's members.
type failureDescriber interface {
	failures(ctx context.Context, d *providerData, o *client.Object) string
}
