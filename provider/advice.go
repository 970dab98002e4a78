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
		return fmt.Sprintf("The provider leaves the %s in %s for you to repair: run its %s, then apply again. Changes "+
			"that need it elsewhere fail until then.", k.Name, state, c.repairHow(k, state))
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

// objectAdvice is errorAdvice for the object o of the refreshed model m, from the decision
// the plan makes: an object made of members whose failed members the next apply repairs
// (an MCI whose dominant status is Failed after a partly failed scale) is updated in place
// from where its working members stand, not replaced.
func (r *kindResource) objectAdvice(k *lifecycle.Kind, m *objectModel, o *client.Object, desired string) string {
	if members, ok := r.cfg.members(); ok && m != nil {
		// The same call the plan makes (resource_plan.go), on the state the refresh wrote.
		from, _, converge := members.plan(m, m, o.State)
		if converge && from != o.State {
			advice := fmt.Sprintf("The next terraform apply updates the %s in place (the plan shows the update): it repairs "+
				"or removes its failed members and provisions replacements, from where its working members stand (%s).",
				k.Name, from)
			if more := r.cfg.errorAdvice(k, from, desired); more != "" && !k.IsError(from) {
				advice += " " + strings.Replace(more, "The next terraform apply", "Then it", 1)
			}
			return advice
		}
	}
	return r.cfg.errorAdvice(k, o.State, desired)
}

// createRepairAdvice is what a create that failed into the held error state state says:
// Terraform taints a resource whose create fails, so an apply after the repair alone would
// replace the repaired object. Untaint first, then repair, then apply.
func (c kindConfig) createRepairAdvice(k *lifecycle.Kind, state string) string {
	return fmt.Sprintf("Terraform marks a resource whose create fails as tainted: the next apply would destroy this %s "+
		"and create a new one. To keep it and repair it instead:\n"+
		"1. run terraform untaint ADDRESS (the resource's address);\n"+
		"2. run its %s;\n"+
		"3. apply again: the %s is kept, with the same ID.", k.Name, c.repairHow(k, state), k.Name)
}

// repairHow names the repair actions of an object of kind k in the error state state and the
// two ways Terraform runs the first: the lifecycle_action resource (every Terraform) and the
// kind's action block (Terraform 1.14+).
func (c kindConfig) repairHow(k *lifecycle.Kind, state string) string {
	repairs := repairActions(k, state)
	how := fmt.Sprintf("%s action from Terraform (a lifecycle_action resource with kind = %q and action = %q", quoted(repairs),
		k.Name, repairs[0])
	if c.typeName != "" {
		how += fmt.Sprintf(", or on Terraform %s+ an action block of type lifecycle_%s with action = %q, run by "+
			"terraform apply -invoke=action.lifecycle_%s.NAME", queryVersion, c.typeName, repairs[0], c.typeName)
	}
	return how + ")"
}

// failedCreateError is a create that ended in an error state (not a timeout): the resource is
// tainted, and the advice says how to keep the object.
type failedCreateError struct{ err error }

func (e *failedCreateError) Error() string { return e.err.Error() }

func (e *failedCreateError) Unwrap() error { return e.err }

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
