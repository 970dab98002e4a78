package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// The walker's errors, and explain, which turns any error of an apply into what the user reads:
// what happened and what to do.

// stepError is a transition that did not end where it should have.
type stepError struct {
	kind, id, action, want string
	obj                    *client.Object
}

func (e *stepError) Error() string {
	msg := fmt.Sprintf("%s %s: action %q should have ended in %s but the object is %s", e.kind, e.id, e.action, e.want, e.obj.State)
	if le := lastError(e.obj); le != "" {
		msg += ": " + le
	}
	return msg
}

// lastError is the message of the object's last failed operation, if any.
func lastError(o *client.Object) string {
	if o == nil {
		return ""
	}
	if le, ok := o.Status["last_error"].(map[string]any); ok {
		msg, _ := le["message"].(string)
		if st, _ := le["state"].(string); st != "" {
			return fmt.Sprintf("%s (failed in %s)", msg, st)
		}
		return msg
	}
	return ""
}

// failedOp is the ID of the operation the object's last error belongs to.
func failedOp(o *client.Object) string {
	if le, ok := o.Status["last_error"].(map[string]any); ok {
		id, _ := le["operation_id"].(string)
		return id
	}
	return ""
}

// waitError is a wait that ended before the object was static: interrupted (Ctrl-C, the
// context cancelled) or timed out (the resource's timeout).
type waitError struct {
	kind, id, last string
	err            error
	// action, when set, is the action whose request was interrupted before its answer came
	// (whether the server started it is not known).
	action string
}

func (e *waitError) Error() string {
	if e.interrupted() && e.action != "" {
		return fmt.Sprintf("interrupted while asking %s %s to %s (last state %s)", e.kind, e.id, e.action, orUnknown(e.last))
	}
	if e.interrupted() {
		return fmt.Sprintf("interrupted while waiting for %s %s (last state %s)", e.kind, e.id, orUnknown(e.last))
	}
	return fmt.Sprintf("timed out waiting for %s %s to reach a static state; last state %s", e.kind, e.id, orUnknown(e.last))
}

func (e *waitError) Unwrap() error { return e.err }

func (e *waitError) interrupted() bool { return errors.Is(e.err, context.Canceled) }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// parentError is an action refused because a related object (the parent, or an ancestor a
// guard looks at) is not in a state it needs, and nothing but the user will move it there.
type parentError struct {
	kind, action, parentKind, parentID, parentState string
	need                                            []string
	// advice says what to do about the blocking object (advise).
	advice string
}

// newParentError is the refusal of kind's action because its related object id, of kind rk,
// is in state and not in one of need, with the advice about rk's object in that state.
func newParentError(kind, action string, rk *lifecycle.Kind, id, state string, need []string) *parentError {
	return &parentError{kind: kind, action: action, parentKind: rk.Name, parentID: id, parentState: state, need: need,
		advice: advise(situation{c: deriveConfig(rk, familyDoc{}), k: rk, event: evBlocking, state: state, need: need}).text}
}

func (e *parentError) Error() string {
	return fmt.Sprintf("%s action %q needs its %s %s to be %s, but it is %s and the system will not move it there",
		e.kind, e.action, e.parentKind, e.parentID, strings.Join(e.need, " or "), e.parentState)
}

// explain turns an error into a diagnostic detail that says what to do.
func explain(err error) string {
	var ae *client.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case client.CodeInvalidTransition:
			d, _ := ae.Transition()
			switch {
			case len(d.Dependents) > 0:
				// Refused for the objects that depend on it: a new plan would change nothing.
				return fmt.Sprintf("%v\n\n%s", err, dependentsAdvice(d.Kind, d.Dependents))
			case len(d.InUseBy) > 0:
				// A simulator from before details.dependents.
				return fmt.Sprintf("%v\n\nThe objects named above still use it: it can go only after they are deleted or name "+
					"another object. When Terraform replaces it while resources still reference it, add `lifecycle { "+
					"create_before_destroy = true }` to it, so that they move to the new object before the old one is deleted.", err)
			case len(d.Allowed) > 0:
				return fmt.Sprintf("%v\n\nThe object changed since the plan; actions allowed from %s now: %s. Run terraform plan again.",
					err, d.State, strings.Join(d.Allowed, ", "))
			}
			return fmt.Sprintf("%v\n\nThe object changed since the plan. Run terraform plan again.", err)
		case client.CodeUnauthorized:
			return fmt.Sprintf("%v\n\nCheck the provider's token (LIFECYCLE_TOKEN).", err)
		case client.CodeBusy:
			return fmt.Sprintf("%v\n\nAnother action is running on the object; apply again when it is done.", err)
		}
	}
	var pe *parentError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%v.\n\n%s", err, pe.advice)
	}
	var ce *createTimeoutError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%v.\n\n%s", err, ce.advice)
	}
	var we *waitError
	if errors.As(err, &we) {
		if we.interrupted() {
			return err.Error() + ".\n\nThe object is kept in the state: the next apply waits for it and carries on from where it is."
		}
		return err.Error() + ".\n\nThe transition may still finish: apply again (it waits for the object first, then carries on), " +
			"or raise the resource's timeouts."
	}
	var se *stepError
	if errors.As(err, &se) {
		return err.Error() + "\n\nThe object is kept in the state; fix the cause and apply again."
	}
	return err.Error()
}
