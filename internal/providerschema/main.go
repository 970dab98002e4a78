// Command providerschema writes the provider's schemas in the form of `terraform providers
// schema -json`, from the provider served in this process, for `tfplugindocs generate
// --providers-schema`. Terraform 1.11 (what CI has) leaves out the action and list resource
// schemas, so tfplugindocs could not render their pages from it; this form has all of them.
//
// Usage: go run ./internal/providerschema -o FILE
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/lifecyclesim/terraform-provider-lifecycle/provider"
)

func main() {
	out := flag.String("o", "", "the `file` to write (standard output when empty)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "providerschema:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	// The docs are of the built-in kinds only: no user kinds from the environment.
	for _, env := range []string{"LIFECYCLE_KINDS", "LIFECYCLESIM_KINDS"} {
		if err := os.Unsetenv(env); err != nil {
			return err
		}
	}
	srv, err := providerserver.NewProtocol6WithError(provider.New("docs")())()
	if err != nil {
		return err
	}
	ctx := context.Background()
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return err
	}
	identities, err := srv.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		return err
	}
	for _, d := range append(schemas.Diagnostics, identities.Diagnostics...) {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return fmt.Errorf("%s: %s", d.Summary, d.Detail)
		}
	}
	p := providerSchema{
		Provider:          schema(schemas.Provider),
		Resources:         schemaMap(schemas.ResourceSchemas),
		DataSources:       schemaMap(schemas.DataSourceSchemas),
		ListResources:     schemaMap(schemas.ListResourceSchemas),
		Actions:           map[string]*actionSchema{},
		Functions:         map[string]*function{},
		ResourceIdentites: map[string]*identitySchema{},
	}
	for name, a := range schemas.ActionSchemas {
		p.Actions[name] = &actionSchema{Block: schema(a.Schema).Block}
	}
	for name, f := range schemas.Functions {
		p.Functions[name] = functionOf(f)
	}
	for name, id := range identities.IdentitySchemas {
		is := &identitySchema{Version: id.Version, Attributes: map[string]*identityAttribute{}}
		for _, a := range id.IdentityAttributes {
			is.Attributes[a.Name] = &identityAttribute{Type: typeJSON(a.Type), Description: a.Description,
				RequiredForImport: a.RequiredForImport, OptionalForImport: a.OptionalForImport}
		}
		p.ResourceIdentites[name] = is
	}
	b, err := json.MarshalIndent(map[string]any{
		"format_version":   "1.0",
		"provider_schemas": map[string]*providerSchema{"lifecycle": &p},
	}, "", "  ")
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(append(b, '\n'))
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}

// The JSON form of `terraform providers schema -json` (what terraform-json reads).
type (
	providerSchema struct {
		Provider          *schemaJSON                `json:"provider,omitempty"`
		Resources         map[string]*schemaJSON     `json:"resource_schemas,omitempty"`
		DataSources       map[string]*schemaJSON     `json:"data_source_schemas,omitempty"`
		ListResources     map[string]*schemaJSON     `json:"list_resource_schemas,omitempty"`
		Actions           map[string]*actionSchema   `json:"action_schemas,omitempty"`
		Functions         map[string]*function       `json:"functions,omitempty"`
		ResourceIdentites map[string]*identitySchema `json:"resource_identity_schemas,omitempty"`
	}
	schemaJSON struct {
		Version int64      `json:"version"`
		Block   *blockJSON `json:"block,omitempty"`
	}
	actionSchema struct {
		Block *blockJSON `json:"block,omitempty"`
	}
	blockJSON struct {
		Attributes      map[string]*attributeJSON `json:"attributes,omitempty"`
		BlockTypes      map[string]*blockType     `json:"block_types,omitempty"`
		Description     string                    `json:"description,omitempty"`
		DescriptionKind string                    `json:"description_kind,omitempty"`
		Deprecated      bool                      `json:"deprecated,omitempty"`
	}
	blockType struct {
		NestingMode string     `json:"nesting_mode,omitempty"`
		Block       *blockJSON `json:"block,omitempty"`
		MinItems    int64      `json:"min_items,omitempty"`
		MaxItems    int64      `json:"max_items,omitempty"`
	}
	attributeJSON struct {
		Type            json.RawMessage `json:"type,omitempty"`
		NestedType      *nestedType     `json:"nested_type,omitempty"`
		Description     string          `json:"description,omitempty"`
		DescriptionKind string          `json:"description_kind,omitempty"`
		Deprecated      bool            `json:"deprecated,omitempty"`
		Required        bool            `json:"required,omitempty"`
		Optional        bool            `json:"optional,omitempty"`
		Computed        bool            `json:"computed,omitempty"`
		Sensitive       bool            `json:"sensitive,omitempty"`
		WriteOnly       bool            `json:"write_only,omitempty"`
	}
	nestedType struct {
		Attributes  map[string]*attributeJSON `json:"attributes,omitempty"`
		NestingMode string                    `json:"nesting_mode,omitempty"`
	}
	function struct {
		Description        string           `json:"description,omitempty"`
		Summary            string           `json:"summary,omitempty"`
		DeprecationMessage string           `json:"deprecation_message,omitempty"`
		ReturnType         json.RawMessage  `json:"return_type"`
		Parameters         []*functionParam `json:"parameters,omitempty"`
		VariadicParameter  *functionParam   `json:"variadic_parameter,omitempty"`
	}
	functionParam struct {
		Name        string          `json:"name,omitempty"`
		Description string          `json:"description,omitempty"`
		IsNullable  bool            `json:"is_nullable,omitempty"`
		Type        json.RawMessage `json:"type"`
	}
	identitySchema struct {
		Version    int64                         `json:"version"`
		Attributes map[string]*identityAttribute `json:"attributes,omitempty"`
	}
	identityAttribute struct {
		Type              json.RawMessage `json:"type,omitempty"`
		Description       string          `json:"description,omitempty"`
		RequiredForImport bool            `json:"required_for_import,omitempty"`
		OptionalForImport bool            `json:"optional_for_import,omitempty"`
	}
)

func schemaMap(in map[string]*tfprotov6.Schema) map[string]*schemaJSON {
	out := make(map[string]*schemaJSON, len(in))
	for name, s := range in {
		out[name] = schema(s)
	}
	return out
}

func schema(s *tfprotov6.Schema) *schemaJSON {
	if s == nil {
		return nil
	}
	return &schemaJSON{Version: s.Version, Block: block(s.Block)}
}

func block(b *tfprotov6.SchemaBlock) *blockJSON {
	if b == nil {
		return nil
	}
	out := &blockJSON{Attributes: attributes(b.Attributes), Description: b.Description,
		DescriptionKind: kind(b.DescriptionKind), Deprecated: b.Deprecated}
	if len(b.BlockTypes) > 0 {
		out.BlockTypes = map[string]*blockType{}
	}
	for _, nb := range b.BlockTypes {
		out.BlockTypes[nb.TypeName] = &blockType{NestingMode: nesting(nb.Nesting.String()), Block: block(nb.Block),
			MinItems: nb.MinItems, MaxItems: nb.MaxItems}
	}
	return out
}

func attributes(in []*tfprotov6.SchemaAttribute) map[string]*attributeJSON {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]*attributeJSON, len(in))
	for _, a := range in {
		j := &attributeJSON{Description: a.Description, DescriptionKind: kind(a.DescriptionKind), Deprecated: a.Deprecated,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive, WriteOnly: a.WriteOnly}
		if a.NestedType != nil {
			j.NestedType = &nestedType{Attributes: attributes(a.NestedType.Attributes), NestingMode: nesting(a.NestedType.Nesting.String())}
		} else {
			j.Type = typeJSON(a.Type)
		}
		out[a.Name] = j
	}
	return out
}

func functionOf(f *tfprotov6.Function) *function {
	param := func(p *tfprotov6.FunctionParameter) *functionParam {
		if p == nil {
			return nil
		}
		return &functionParam{Name: p.Name, Description: p.Description, IsNullable: p.AllowNullValue, Type: typeJSON(p.Type)}
	}
	out := &function{Description: f.Description, Summary: f.Summary, DeprecationMessage: f.DeprecationMessage,
		VariadicParameter: param(f.VariadicParameter)}
	if f.Return != nil {
		out.ReturnType = typeJSON(f.Return.Type)
	}
	for _, p := range f.Parameters {
		out.Parameters = append(out.Parameters, param(p))
	}
	return out
}

// typeJSON is a type in the JSON form Terraform's schemas use (cty's: "string",
// ["list","string"], ["object",{...}]).
func typeJSON(t tftypes.Type) json.RawMessage {
	if t == nil {
		return nil
	}
	b, err := json.Marshal(typeValue(t))
	if err != nil {
		panic(fmt.Sprintf("providerschema: %v", err))
	}
	return b
}

func typeValue(t tftypes.Type) any {
	switch {
	case t.Is(tftypes.String):
		return "string"
	case t.Is(tftypes.Number):
		return "number"
	case t.Is(tftypes.Bool):
		return "bool"
	case t.Is(tftypes.DynamicPseudoType):
		return "dynamic"
	}
	switch x := t.(type) {
	case tftypes.List:
		return []any{"list", typeValue(x.ElementType)}
	case tftypes.Set:
		return []any{"set", typeValue(x.ElementType)}
	case tftypes.Map:
		return []any{"map", typeValue(x.ElementType)}
	case tftypes.Tuple:
		elems := make([]any, len(x.ElementTypes))
		for i, e := range x.ElementTypes {
			elems[i] = typeValue(e)
		}
		return []any{"tuple", elems}
	case tftypes.Object:
		attrs := map[string]any{}
		for name, at := range x.AttributeTypes {
			attrs[name] = typeValue(at)
		}
		return []any{"object", attrs}
	}
	panic(fmt.Sprintf("providerschema: no JSON form for the type %s", t))
}

// kind is a description kind as Terraform writes it.
func kind(k tfprotov6.StringKind) string {
	if k == tfprotov6.StringKindMarkdown {
		return "markdown"
	}
	return "plain"
}

// nesting is a nesting mode as Terraform writes it ("LIST" or "NESTING_LIST" → "list").
func nesting(mode string) string {
	return strings.ToLower(strings.TrimPrefix(mode, "NESTING_"))
}
