package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// What the CLI and the language server show (Description) is plain text, and every
// description the docs show (MarkdownDescription) has its plain twin, in every schema.
func TestDescriptionsHavePlainForms(t *testing.T) {
	ctx := t.Context()
	p := New("test")()
	check := func(where, plain, md string) {
		t.Helper()
		if strings.Contains(plain, "`") || strings.Contains(plain, "**") {
			t.Errorf("%s: plain description has Markdown: %q", where, plain)
		}
		if md != "" && plain == "" {
			t.Errorf("%s: Markdown description without a plain one", where)
		}
	}
	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	for name, a := range ps.Schema.Attributes {
		check("provider."+name, a.GetDescription(), a.GetMarkdownDescription())
	}
	for _, f := range p.Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "lifecycle"}, &md)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		check(md.TypeName, s.Schema.Description, s.Schema.MarkdownDescription)
		for name, a := range s.Schema.Attributes {
			check(md.TypeName+"."+name, a.GetDescription(), a.GetMarkdownDescription())
		}
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "lifecycle"}, &md)
		var s datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &s)
		check("data."+md.TypeName, s.Schema.Description, s.Schema.MarkdownDescription)
		for name, a := range s.Schema.Attributes {
			check("data."+md.TypeName+"."+name, a.GetDescription(), a.GetMarkdownDescription())
		}
	}
	if pf, ok := p.(provider.ProviderWithFunctions); ok {
		for _, f := range pf.Functions(ctx) {
			var d function.DefinitionResponse
			f().Definition(ctx, function.DefinitionRequest{}, &d)
			for _, param := range d.Definition.Parameters {
				check("function parameter "+param.GetName(), param.GetDescription(), param.GetMarkdownDescription())
			}
		}
	}
}
