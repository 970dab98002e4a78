package provider

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// A user kind's typed resource cannot have a page in this repository's docs/: the kind is the
// user's. WriteKindDocs renders the Markdown page of each, from the same schema Terraform gets,
// in the layout tfplugindocs gives the built-in ones; `terraform-provider-lifecycle docs FILE...`
// runs it.

// WriteKindDocs writes the Markdown page of every typed resource the user kinds files give into
// dir (lifecycle_<kind>.md), and lists the files it wrote to w.
func WriteKindDocs(w io.Writer, dir string, files ...string) error {
	if len(files) == 0 {
		return fmt.Errorf("name at least one kinds file (the file lifecyclesim --kinds reads)")
	}
	u := loadUserKindFiles("FILE", files...)
	if u.err != nil {
		return fmt.Errorf("%w (lifecyclesim check %s lists every problem with its fix)", u.err, strings.Join(files, " "))
	}
	cfgs := u.configs(false)
	if len(cfgs) == 0 {
		return fmt.Errorf("%s declare no kind a resource manages (every kind is made by its parent)", strings.Join(files, ", "))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, cfg := range cfgs {
		var resp resource.SchemaResponse
		newKindResource(cfg).Schema(context.Background(), resource.SchemaRequest{}, &resp)
		name := filepath.Join(dir, "lifecycle_"+cfg.typeName+".md")
		if err := os.WriteFile(name, []byte(kindPage(cfg, resp.Schema)), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(w, name)
	}
	return nil
}

// kindPage is the Markdown page of a typed resource.
func kindPage(cfg kindConfig, s schema.Schema) string {
	var b strings.Builder
	typ := "lifecycle_" + cfg.typeName
	fmt.Fprintf(&b, "# %s (Resource)\n\n%s\n\n", typ, strings.TrimSpace(s.MarkdownDescription))
	fmt.Fprintf(&b, "A typed resource of the user-defined kind `%s`, derived from its spec: the provider has it when "+
		"`LIFECYCLE_KINDS` (or `LIFECYCLESIM_KINDS`) names the kinds file the simulator was started with.\n\n", cfg.kind)
	b.WriteString("## Schema\n")
	groups := []struct {
		title string
		keep  func(schema.Attribute) bool
	}{
		{"Required", func(a schema.Attribute) bool { return a.IsRequired() }},
		{"Optional", func(a schema.Attribute) bool { return a.IsOptional() }},
		{"Read-Only", func(a schema.Attribute) bool { return a.IsComputed() && !a.IsOptional() && !a.IsRequired() }},
	}
	for _, g := range groups {
		var lines []string
		for _, name := range slices.Sorted(maps.Keys(s.Attributes)) {
			if a := s.Attributes[name]; g.keep(a) {
				lines = append(lines, fmt.Sprintf("- `%s` (%s) %s", name, typeOf(a), strings.TrimSpace(a.GetMarkdownDescription())))
			}
		}
		if g.title == "Optional" {
			for _, name := range slices.Sorted(maps.Keys(s.Blocks)) {
				lines = append(lines, fmt.Sprintf("- `%s` (Block) %s", name, strings.TrimSpace(s.Blocks[name].GetMarkdownDescription())))
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n### %s\n\n%s\n", g.title, strings.Join(lines, "\n"))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Blocks)) {
		blk, ok := s.Blocks[name].(schema.ListNestedBlock)
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "\n### Nested block `%s`\n\n", name)
		for _, sub := range slices.Sorted(maps.Keys(blk.NestedObject.Attributes)) {
			a := blk.NestedObject.Attributes[sub]
			fmt.Fprintf(&b, "- `%s` (%s) %s\n", sub, typeOf(a), strings.TrimSpace(a.GetMarkdownDescription()))
		}
	}
	fmt.Fprintf(&b, "\n## Import\n\n```shell\nterraform import %s.example %s-0a1b2c3d4e5f6a7b\n```\n", typ, cfg.kind)
	return b.String()
}

// typeOf names an attribute's type as the generated docs do.
func typeOf(a schema.Attribute) string {
	switch a.(type) {
	case schema.StringAttribute:
		return "String"
	case schema.Int64Attribute:
		return "Number"
	case schema.Float64Attribute:
		return "Number"
	case schema.BoolAttribute:
		return "Boolean"
	case schema.ListAttribute, schema.ListNestedAttribute:
		return "List"
	case schema.MapAttribute:
		return "Map"
	case schema.SingleNestedAttribute:
		return "Object"
	}
	return "Value"
}
