package provider

import (
	"regexp"
	"strings"

	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/function"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// Descriptions are written once, in Markdown. The schemas carry them as MarkdownDescription
// (for the generated docs) and as plain text in Description (what the CLI and the language
// server show), so no raw backticks reach a terminal.

var (
	mdLink = regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)
	mdCode = regexp.MustCompile("`([^`]*)`")
	mdBold = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// plainText is a Markdown description as plain text: links keep their text, code spans and
// bold lose their markers.
func plainText(md string) string {
	s := mdLink.ReplaceAllString(md, "$1")
	s = mdBold.ReplaceAllString(s, "$1")
	s = mdCode.ReplaceAllString(s, "$1")
	return strings.TrimSpace(s)
}

// both returns the plain and Markdown forms of a description written in Markdown; a
// description that already has a Markdown form is left as it is.
func both(desc, md string) (plain, markdown string) {
	if md != "" {
		if desc == "" {
			desc = plainText(md)
		}
		return desc, md
	}
	return plainText(desc), desc
}

func markdownResourceSchema(s *rschema.Schema) {
	s.Description, s.MarkdownDescription = both(s.Description, s.MarkdownDescription)
	for name, a := range s.Attributes {
		switch v := a.(type) {
		case rschema.StringAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case rschema.Int64Attribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case rschema.BoolAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case rschema.MapAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case rschema.ListAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		}
	}
}

func markdownDataSourceSchema(s *dschema.Schema) {
	s.Description, s.MarkdownDescription = both(s.Description, s.MarkdownDescription)
	for name, a := range s.Attributes {
		switch v := a.(type) {
		case dschema.StringAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case dschema.Int64Attribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case dschema.BoolAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case dschema.MapAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case dschema.ListAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		}
	}
}

func markdownProviderSchema(s *pschema.Schema) {
	s.Description, s.MarkdownDescription = both(s.Description, s.MarkdownDescription)
	for name, a := range s.Attributes {
		switch v := a.(type) {
		case pschema.StringAttribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		case pschema.Int64Attribute:
			v.Description, v.MarkdownDescription = both(v.Description, v.MarkdownDescription)
			s.Attributes[name] = v
		}
	}
}

func markdownFunction(d *function.Definition) {
	d.Description, d.MarkdownDescription = both(d.Description, d.MarkdownDescription)
	params := make([]function.Parameter, len(d.Parameters))
	for i, p := range d.Parameters {
		if sp, ok := p.(function.StringParameter); ok {
			sp.Description, sp.MarkdownDescription = both(sp.Description, sp.MarkdownDescription)
			p = sp
		}
		params[i] = p
	}
	d.Parameters = params
}
