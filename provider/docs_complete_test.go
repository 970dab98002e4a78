package provider

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// The registry pages of actions and list resources, and identity imports, show blocks that
// CI's Terraform 1.11 cannot run: these tests check them without Terraform, at the protocol
// level, and TestAccExamples runs them where TF_ACC_TERRAFORM_PATH names a Terraform 1.14+.

// providerSchemas are the schemas the provider serves, as Terraform reads them (no simulator).
func providerSchemas(t *testing.T) (serverWithNewerRPCs, *tfprotov6.GetProviderSchemaResponse, *tfprotov6.GetResourceIdentitySchemasResponse) {
	t.Helper()
	ctx := context.Background()
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasError(schemas.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %v", err, diagText(schemas.Diagnostics))
	}
	ids, err := srv.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || hasError(ids.Diagnostics) {
		t.Fatalf("GetResourceIdentitySchemas: %v %v", err, diagText(ids.Diagnostics))
	}
	full, ok := srv.(serverWithNewerRPCs)
	if !ok {
		t.Fatal("the provider server has no action or list resource RPCs")
	}
	return full, schemas, ids
}

// serverWithNewerRPCs is the provider server with the RPCs of Terraform 1.14.
type serverWithNewerRPCs interface {
	tfprotov6.ProviderServer
	tfprotov6.ActionServer
	tfprotov6.ListResourceServer
}

// shortName is a type's page name: lifecycle_machine → machine.
func shortName(typeName string) string { return strings.TrimPrefix(typeName, "lifecycle_") }

// TestDocsPagesComplete fails when a list-resource or action page has no example, when a
// resource with an identity has no identity import (example and page), or when a page has no
// subcategory (the registry's navigation groups pages by it), as terraform-provider-tfe
// checks its pages.
func TestDocsPagesComplete(t *testing.T) {
	_, schemas, ids := providerSchemas(t)
	page := func(group, typeName string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "docs", group, shortName(typeName)+".md"))
		if err != nil {
			t.Errorf("%s has no page in docs/%s: %v", typeName, group, err)
			return ""
		}
		return string(b)
	}
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(examplesDir, rel))
		return err == nil
	}

	if len(schemas.ActionSchemas) == 0 || len(schemas.ListResourceSchemas) == 0 || len(ids.IdentitySchemas) == 0 {
		t.Fatalf("the provider serves %d actions, %d list resources and %d identities, want some of each",
			len(schemas.ActionSchemas), len(schemas.ListResourceSchemas), len(ids.IdentitySchemas))
	}
	for typeName := range schemas.ActionSchemas {
		if !exists(filepath.Join("actions", typeName, "action.tf")) {
			t.Errorf("action %s: no example (examples/actions/%s/action.tf)", typeName, typeName)
		}
		if p := page("actions", typeName); p != "" && (!strings.Contains(p, "## Example Usage") || !strings.Contains(p, `action "`+typeName+`"`)) {
			t.Errorf("docs/actions/%s.md shows no action %q block: run make generate", shortName(typeName), typeName)
		}
	}
	for typeName := range schemas.ListResourceSchemas {
		if !exists(filepath.Join("list-resources", typeName, "list-resource.tfquery.hcl")) {
			t.Errorf("list resource %s: no example (examples/list-resources/%s/list-resource.tfquery.hcl)", typeName, typeName)
		}
		if p := page("list-resources", typeName); p != "" && (!strings.Contains(p, "## Example Usage") || !strings.Contains(p, `list "`+typeName+`"`)) {
			t.Errorf("docs/list-resources/%s.md shows no list %q block: run make generate", shortName(typeName), typeName)
		}
	}
	for typeName := range ids.IdentitySchemas {
		if !exists(filepath.Join("resources", typeName, "import-by-identity.hcl")) {
			t.Errorf("resource %s has an identity but no identity import (examples/resources/%s/import-by-identity.hcl)", typeName, typeName)
		}
		p := page("resources", typeName)
		if p == "" {
			continue
		}
		if !regexp.MustCompile(`(?s)import \{\s*to\s*=\s*` + typeName + `\.\w+\s*identity = \{`).MatchString(p) {
			t.Errorf("docs/resources/%s.md shows no import { identity = ... } block for %s", shortName(typeName), typeName)
		}
		if !strings.Contains(p, "### Identity Schema") {
			t.Errorf("docs/resources/%s.md has no identity section (### Identity Schema)", shortName(typeName))
		}
	}

	subcategory := regexp.MustCompile(`(?m)^subcategory: "([^"]*)"$`)
	err := filepath.WalkDir(filepath.Join("..", "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") || filepath.Base(p) == "index.md" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if m := subcategory.FindSubmatch(b); m == nil || len(m[1]) == 0 {
			t.Errorf("%s: empty or missing subcategory (set it in its template's front matter)", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Terraform's action trigger events and on_failure keywords, and the release that reads them.
var (
	triggerEvents114 = []string{"before_create", "after_create", "before_update", "after_update"}
	triggerEvents116 = []string{"before_destroy", "after_destroy"}
	onFailure116     = []string{"halt", "taint", "continue"}
	// newerMarker is the comment a file with blocks of a newer Terraform starts with.
	newerMarker = regexp.MustCompile(`^# Terraform (1\.1[46])\+`)
)

// TestExamplesNewerBlocks parses every example that holds action or list blocks (Terraform
// 1.14+) or action triggers, and checks each block against the schema the provider serves over
// the protocol, as Terraform 1.14 would before it runs them: the type exists, every attribute of
// its config is in the schema, the required ones are set, and the provider's own validation
// (ValidateActionConfig, ValidateListResourceConfig) accepts the values known without a state.
// A literal state in a list block is one of the kind's states; an action trigger names events
// and on_failure keywords Terraform knows and actions declared beside it; a file using Terraform
// 1.16's before_destroy, after_destroy or on_failure says "Terraform 1.16+" first.
func TestExamplesNewerBlocks(t *testing.T) {
	srv, schemas, _ := providerSchemas(t)
	reg := lifecycle.Builtin()
	files := exampleFiles(t)
	seen := map[string]int{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, diags := hclsyntax.ParseConfig(src, f, hcl.InitialPos)
		if diags.HasErrors() {
			t.Errorf("%s does not parse: %s", f, diags.Error())
			continue
		}
		body, ok := file.Body.(*hclsyntax.Body)
		if !ok {
			t.Fatalf("%s: not native syntax", f)
		}
		marker := newerMarker.FindSubmatch(src)
		need := ""
		declared := map[string]bool{}
		for _, b := range body.Blocks {
			switch b.Type {
			case "action":
				need = max(need, "1.14")
				declared["action."+strings.Join(b.Labels, ".")] = true
				seen["action"]++
				var s *tfprotov6.Schema
				if as, ok := schemas.ActionSchemas[b.Labels[0]]; ok {
					s = as.Schema
				}
				checkNewerBlock(t, srv, f, b, s, reg)
			case "list":
				need = max(need, "1.14")
				seen["list"]++
				var s *tfprotov6.Schema
				if ls, ok := schemas.ListResourceSchemas[b.Labels[0]]; ok {
					s = ls
				}
				checkNewerBlock(t, srv, f, b, s, reg)
			}
		}
		for _, b := range body.Blocks {
			if b.Type != "resource" {
				continue
			}
			for _, lc := range b.Body.Blocks {
				if lc.Type != "lifecycle" {
					continue
				}
				for _, at := range lc.Body.Blocks {
					if at.Type != "action_trigger" {
						continue
					}
					seen["action_trigger"]++
					need = max(need, checkTrigger(t, f, at, declared))
				}
			}
		}
		if need == "" {
			continue
		}
		if marker == nil || string(marker[1]) != need {
			t.Errorf("%s uses blocks of Terraform %s: its first line must say \"# Terraform %s+\" (the pages tell users which release they need)", f, need, need)
		}
	}
	// The examples this test must see: one per action and list resource, and the 1.16 triggers.
	if seen["action"] < len(schemas.ActionSchemas) || seen["list"] < len(schemas.ListResourceSchemas) || seen["action_trigger"] < 3 {
		t.Errorf("checked %d action blocks, %d list blocks and %d action triggers in %d files; want at least %d, %d and 3",
			seen["action"], seen["list"], seen["action_trigger"], len(files), len(schemas.ActionSchemas), len(schemas.ListResourceSchemas))
	}
}

// exampleFiles lists every .tf and .tfquery.hcl file under examples/.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(examplesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".tf") || strings.HasSuffix(p, ".tfquery.hcl")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkNewerBlock checks an action or list block's config against the type's schema, then
// asks the provider to validate it.
func checkNewerBlock(t *testing.T, srv serverWithNewerRPCs, file string, b *hclsyntax.Block, s *tfprotov6.Schema, reg *lifecycle.Registry) {
	t.Helper()
	where := fmt.Sprintf("%s: %s %q %q", file, b.Type, b.Labels[0], b.Labels[1])
	if s == nil {
		t.Errorf("%s: the provider serves no %s of type %s", where, b.Type, b.Labels[0])
		return
	}
	var config *hclsyntax.Block
	for _, inner := range b.Body.Blocks {
		if inner.Type == "config" {
			config = inner
		}
	}
	if config == nil {
		t.Errorf("%s: no config block", where)
		return
	}
	typ, ok := s.ValueType().(tftypes.Object)
	if !ok {
		t.Fatalf("%s: the schema's type is %s, not an object", where, s.ValueType())
	}
	vals := map[string]tftypes.Value{}
	for name, attr := range config.Body.Attributes {
		at, ok := typ.AttributeTypes[name]
		if !ok {
			t.Errorf("%s: %s is not an argument of %s", where, name, b.Labels[0])
			continue
		}
		vals[name] = literal(t, where, name, attr.Expr, at)
	}
	for _, a := range s.Block.Attributes {
		if a.Required && vals[a.Name].IsNull() {
			t.Errorf("%s: the required argument %s is not set", where, a.Name)
		}
	}
	cfg := dynamic(t, objectOf(typ, vals))
	ctx := context.Background()
	if b.Type == "action" {
		resp, err := srv.ValidateActionConfig(ctx, &tfprotov6.ValidateActionConfigRequest{ActionType: b.Labels[0], Config: cfg})
		if err != nil || hasError(resp.Diagnostics) {
			t.Errorf("%s: ValidateActionConfig: %v %s", where, err, diagText(resp.Diagnostics))
		}
		return
	}
	include := tftypes.NewValue(tftypes.Bool, false)
	if attr, ok := b.Body.Attributes["include_resource"]; ok {
		include = literal(t, where, "include_resource", attr.Expr, tftypes.Bool)
	}
	for name := range b.Body.Attributes {
		if !slices.Contains([]string{"provider", "include_resource", "limit", "count", "for_each"}, name) {
			t.Errorf("%s: %s is not an argument of a list block", where, name)
		}
	}
	resp, err := srv.ValidateListResourceConfig(ctx, &tfprotov6.ValidateListResourceConfigRequest{
		TypeName: b.Labels[0], Config: cfg,
		IncludeResourceObject: dynamic(t, tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"include_resource": tftypes.Bool}},
			map[string]tftypes.Value{"include_resource": include})),
		Limit: dynamic(t, tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"limit": tftypes.Number}},
			map[string]tftypes.Value{"limit": tftypes.NewValue(tftypes.Number, 100)})),
	})
	if err != nil || hasError(resp.Diagnostics) {
		t.Errorf("%s: ValidateListResourceConfig: %v %s", where, err, diagText(resp.Diagnostics))
	}
	// A literal state must be one the kind has (the list filters on it, and finds nothing else).
	var state, kindName string
	_ = vals["state"].As(&state)
	kindName = shortName(b.Labels[0])
	if v, ok := vals["kind"]; ok {
		_ = v.As(&kindName)
	}
	if state != "" && kindName != "" {
		if k, err := reg.Kind(kindName); err != nil {
			t.Errorf("%s: kind %s: %v", where, kindName, err)
		} else if !k.HasState(state) {
			t.Errorf("%s: state = %q is no state of %s", where, state, kindName)
		}
	}
}

// literal is an attribute's value as the provider receives it at validation: the value of a
// literal expression, unknown for one that refers to anything or calls a function.
func literal(t *testing.T, where, name string, expr hclsyntax.Expression, typ tftypes.Type) tftypes.Value {
	t.Helper()
	calls := false
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		_, isCall := n.(*hclsyntax.FunctionCallExpr)
		calls = calls || isCall
		return nil
	})
	if len(expr.Variables()) > 0 || calls {
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		t.Errorf("%s: %s: %s", where, name, diags.Error())
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	}
	switch {
	case typ.Is(tftypes.String) && v.Type() == cty.String:
		return tftypes.NewValue(typ, v.AsString())
	case typ.Is(tftypes.Bool) && v.Type() == cty.Bool:
		return tftypes.NewValue(typ, v.True())
	case typ.Is(tftypes.Number) && v.Type() == cty.Number:
		return tftypes.NewValue(typ, v.AsBigFloat())
	}
	t.Errorf("%s: %s = %s, want a %s", where, name, v.GoString(), typ)
	return tftypes.NewValue(typ, tftypes.UnknownValue)
}

// checkTrigger checks an action_trigger block as Terraform reads it, and returns the release
// it needs.
func checkTrigger(t *testing.T, file string, at *hclsyntax.Block, declared map[string]bool) string {
	t.Helper()
	need := "1.14"
	where := file + ": action_trigger"
	if attr, ok := at.Body.Attributes["events"]; ok {
		exprs, diags := hcl.ExprList(attr.Expr)
		if diags.HasErrors() {
			t.Errorf("%s: events: %s", where, diags.Error())
		}
		for _, e := range exprs {
			switch ev := hcl.ExprAsKeyword(e); {
			case slices.Contains(triggerEvents114, ev):
			case slices.Contains(triggerEvents116, ev):
				need = "1.16"
			default:
				t.Errorf("%s: %q is no action trigger event (Terraform 1.14: %v; 1.16 adds %v)", where, ev, triggerEvents114, triggerEvents116)
			}
		}
	} else {
		t.Errorf("%s: no events", where)
	}
	if attr, ok := at.Body.Attributes["on_failure"]; ok {
		need = "1.16"
		if kw := hcl.ExprAsKeyword(attr.Expr); !slices.Contains(onFailure116, kw) {
			t.Errorf("%s: on_failure = %q, want one of %v", where, kw, onFailure116)
		}
	}
	attr, ok := at.Body.Attributes["actions"]
	if !ok {
		t.Errorf("%s: no actions", where)
		return need
	}
	exprs, diags := hcl.ExprList(attr.Expr)
	if diags.HasErrors() {
		t.Errorf("%s: actions: %s", where, diags.Error())
	}
	for _, e := range exprs {
		tr, diags := hcl.AbsTraversalForExpr(e)
		if diags.HasErrors() || len(tr) != 3 {
			t.Errorf("%s: actions must name action.TYPE.NAME", where)
			continue
		}
		typ, ok1 := tr[1].(hcl.TraverseAttr)
		name, ok2 := tr[2].(hcl.TraverseAttr)
		if ref := tr.RootName() + "." + typ.Name + "." + name.Name; !ok1 || !ok2 || !declared[ref] {
			t.Errorf("%s: %s is not declared in the same file", where, ref)
		}
	}
	for name := range at.Body.Attributes {
		if !slices.Contains([]string{"events", "actions", "condition", "on_failure"}, name) {
			t.Errorf("%s: %s is not an argument of action_trigger", where, name)
		}
	}
	return need
}
