package provider

import (
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// TestExampleTriggerPlans plans the examples' action triggers as Terraform 1.14 does, at the
// protocol level: for every status a user can give the resource, when the trigger's condition
// lets the action run (triggers whose action's object_status is the resource's status, and
// whose condition reads only that), the plan of the action (object_status = that status) must accept it. A
// trigger without a condition on an action some status refuses blocks that status change:
// the plan fails ("Failed to plan action ... Nothing was run.") with no hint.
func TestExampleTriggerPlans(t *testing.T) {
	p := newProtoProvider(t, newTestSim(t))
	reg := lifecycle.Builtin()
	funcs := map[string]function.Function{"contains": stdlib.ContainsFunc}
	checked := 0
	for _, f := range exampleFiles(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		if diags.HasErrors() {
			continue // TestExamplesNewerBlocks reports it
		}
		body := file.Body.(*hclsyntax.Body)
		actions := map[string]*hclsyntax.Body{}
		for _, b := range body.Blocks {
			if b.Type == "action" {
				for _, inner := range b.Body.Blocks {
					if inner.Type == "config" {
						actions["action."+strings.Join(b.Labels, ".")] = inner.Body
					}
				}
			}
		}
		for _, res := range body.Blocks {
			if res.Type != "resource" {
				continue
			}
			k, err := reg.Kind(shortName(res.Labels[0]))
			if err != nil {
				continue // lifecycle_object and the like: no status of one kind
			}
			for _, lc := range res.Body.Blocks {
				if lc.Type != "lifecycle" {
					continue
				}
				for _, at := range lc.Body.Blocks {
					if at.Type != "action_trigger" {
						continue
					}
					for _, ref := range triggerActions(at) {
						cfg, ok := actions[ref]
						if !ok {
							continue // TestExamplesNewerBlocks reports it
						}
						checked += checkTriggerPlan(t, p, f, res, at, ref, cfg, k, funcs)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no action trigger of the examples was planned")
	}
}

// triggerActions are the action references of an action_trigger block.
func triggerActions(at *hclsyntax.Block) []string {
	attr, ok := at.Body.Attributes["actions"]
	if !ok {
		return nil
	}
	exprs, _ := hcl.ExprList(attr.Expr)
	var refs []string
	for _, e := range exprs {
		tr, diags := hcl.AbsTraversalForExpr(e)
		if diags.HasErrors() || len(tr) != 3 {
			continue
		}
		typ, _ := tr[1].(hcl.TraverseAttr)
		name, _ := tr[2].(hcl.TraverseAttr)
		refs = append(refs, tr.RootName()+"."+typ.Name+"."+name.Name)
	}
	return refs
}

// checkTriggerPlan plans one triggered action for each status the resource may be given, and
// returns how many plans it checked.
func checkTriggerPlan(t *testing.T, p *protoProvider, file string, res, at *hclsyntax.Block, ref string, cfg *hclsyntax.Body, k *lifecycle.Kind, funcs map[string]function.Function) int {
	t.Helper()
	actionAttr, ok := cfg.Attributes["action"]
	if !ok {
		return 0
	}
	actionName, diags := actionAttr.Expr.Value(nil)
	if diags.HasErrors() || actionName.Type() != cty.String {
		return 0
	}
	// Planned from the status the resource is given: the action's object_status is the
	// resource's status, and the condition (if any) reads nothing else.
	own := func(expr hclsyntax.Expression) bool {
		vars := expr.Variables()
		for _, v := range vars {
			if len(v) != 3 || v.RootName() != res.Labels[0] {
				return false
			}
			name, ok1 := v[1].(hcl.TraverseAttr)
			attr, ok2 := v[2].(hcl.TraverseAttr)
			if !ok1 || !ok2 || name.Name != res.Labels[1] || attr.Name != "status" {
				return false
			}
		}
		return len(vars) > 0
	}
	if objStatus, ok := cfg.Attributes["object_status"]; !ok || !own(objStatus.Expr) {
		return 0
	}
	if cond, ok := at.Body.Attributes["condition"]; ok && !own(cond.Expr) {
		return 0
	}
	n := 0
	for _, status := range k.StaticStates() {
		if k.IsFinal(status) || k.IsGone(status) || k.IsError(status) {
			continue
		}
		ctx := &hcl.EvalContext{
			Variables: map[string]cty.Value{res.Labels[0]: cty.ObjectVal(map[string]cty.Value{
				res.Labels[1]: cty.ObjectVal(map[string]cty.Value{"status": cty.StringVal(status)}),
			})},
			Functions: funcs,
		}
		if cond, ok := at.Body.Attributes["condition"]; ok {
			v, diags := cond.Expr.Value(ctx)
			if diags.HasErrors() {
				t.Errorf("%s: the condition of %s.%s's trigger: %s", file, res.Labels[0], res.Labels[1], diags.Error())
				return n
			}
			if v.False() {
				continue
			}
		}
		n++
		d := p.planAction(t, ref[len("action."):strings.LastIndex(ref, ".")], map[string]string{
			"id": shortName(res.Labels[0]) + "-0a1b2c3d4e5f6a7b", "action": actionName.AsString(), "object_status": status,
		})
		if hasError(d) {
			t.Errorf("%s: %s.%s's trigger runs %s when status = %q, and the plan of the action fails "+
				"(give the trigger a condition):\n%s", file, res.Labels[0], res.Labels[1], ref, status, diagText(d))
		}
	}
	return n
}
