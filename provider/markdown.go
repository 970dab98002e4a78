package provider

import (
	"reflect"
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

// described returns a copy of a schema attribute or function parameter (any of the
// framework's types: they all have Description and MarkdownDescription fields) with both forms
// set by both.
func described[T any](v T) T {
	val := reflect.ValueOf(v)
	if val.Kind() != reflect.Struct {
		return v
	}
	c := reflect.New(val.Type()).Elem()
	c.Set(val)
	d, md := c.FieldByName("Description"), c.FieldByName("MarkdownDescription")
	if d.Kind() != reflect.String || md.Kind() != reflect.String {
		return v
	}
	plain, markdown := both(d.String(), md.String())
	d.SetString(plain)
	md.SetString(markdown)
	if out, ok := c.Interface().(T); ok {
		return out
	}
	return v
}

// describedAll applies described to every value of a schema's attribute map.
func describedAll[T any](attrs map[string]T) {
	for name, a := range attrs {
		attrs[name] = described(a)
	}
}

func markdownResourceSchema(s *rschema.Schema) {
	s.Description, s.MarkdownDescription = both(s.Description, s.MarkdownDescription)
	describedAll(s.Attributes)
	// terraform-plugin-framework-timeouts leaves its block undescribed.
	if b, ok := s.Blocks["timeouts"].(rschema.SingleNestedBlock); ok && b.Description == "" && b.MarkdownDescription == "" {
		b.Description, b.MarkdownDescription = both("", timeoutsDescription)
		s.Blocks["timeouts"] = b
	}
}

// timeoutsDescription describes every resource's timeouts block; the resource pages' Timeouts
// sections say what each value bounds.
const timeoutsDescription = "How long each operation may take, waits included, as Go durations (`30m`); " +
	"each defaults to 20 minutes. See Timeouts below."

func markdownDataSourceSchema(s *dschema.Schema) {
	s.Description, s.MarkdownDescription = both(s.Description, s.MarkdownDescription)
	describedAll(s.Attributes)
}

func markdownProviderSchema(s *pschema.Schema) {
	s.Description, s.MarkdownDescription = both(s.Description, s.MarkdownDescription)
	describedAll(s.Attributes)
}

func markdownFunction(d *function.Definition) {
	d.Description, d.MarkdownDescription = both(d.Description, d.MarkdownDescription)
	params := make([]function.Parameter, len(d.Parameters))
	for i, p := range d.Parameters {
		params[i] = described(p)
	}
	d.Parameters = params
}
