// Package kindref generates the kind file format's reference page (a tfplugindocs guide
// template) and its JSON Schema from the format the loader checks files against
// (lifecycle.Format) and the doc table of every key. The binary (lifecyclesim schema) and
// internal/kindsdoc (make generate) import it; the loader does not.
package kindref

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// KindsReference renders the reference page of the kind file format (a tfplugindocs guide
// template, rendered into docs/guides/kind-reference.md) from the Go types and their doc table.
func KindsReference() []byte {
	var b bytes.Buffer
	b.WriteString(`---
page_title: "Kind file reference"
subcategory: "Your own kinds"
description: |-
  Every key of a lifecyclesim kind file: its type, default, what it does and an example.
---

<!-- Generated from the Go types of lifecycle/ by go run ./internal/kindsdoc (make generate): do not edit. -->

# Kind file reference

A kind file declares your own object kinds: ` + "`lifecyclesim --kinds FILE`" + ` serves them next to the
built-in ones and the provider manages them (` + "`lifecycle_object`" + `). The built-in kinds use the
same format (` + "`lifecycle/specs/`" + `). Start with the [tutorial](kinds-tutorial.md); this page lists
every key.

- **Check a file** before starting a simulator: ` + "`lifecyclesim check FILE...`" + ` loads it exactly as
  ` + "`--kinds`" + ` would, with the built-in kinds, and prints every problem at its file:line with the
  fix (exit status 1 when there is one). ` + "`lifecyclesim render FILE`" + ` prints its state and relations
  diagrams (Mermaid).
- **Editors**: the format's JSON Schema is ` + "`lifecycle/kinds.schema.json`" + ` in the repository
  (also printed by ` + "`lifecyclesim schema`" + `). With the YAML language server (VS Code's YAML
  extension, Neovim, Helix...) put this line at the top of a kind file:

  ` + "```yaml\n  # yaml-language-server: $schema=https://raw.githubusercontent.com/lifecyclesim/terraform-provider-lifecycle/main/lifecycle/kinds.schema.json\n  ```" + `

  or a relative path to a local copy.
- Names of states, actions, kinds and fields are case-sensitive. A value written as a list
  may be written ` + "`[A, B]`" + ` or one ` + "`- A`" + ` per line; where a key takes "a name or a list", one name
  needs no brackets.

## Renamed keys

The same idea has the same name everywhere: ` + "`in`" + ` is always the states another object must be
in, ` + "`actions`" + ` the actions something applies to, ` + "`from`" + ` always states. The old names still
load, with a warning naming the new one (` + "`check`" + ` prints it too). ` + "`GET /v1/kinds`" + ` keeps
serving the old names (the JSON wire form is unchanged), so providers and simulators of
different releases understand each other.

| Where | Old key | New key |
|-------|---------|---------|
`)
	for _, k := range allKeys() {
		for _, was := range k.Was {
			fmt.Fprintf(&b, "| %s | `%s` | `%s` |\n", k.Owner.Word, was, k.Name)
		}
	}
	b.WriteString(`
## Derivations: generic and family-only

Any kind may derive its state and status fields from its children with the generic
derivations of ` + "`derive.use`" + `: ` + "`count_by_state`, `count_in`, `all_in`, `any_in`, `dominant_state`" + `
(see [derivation](#derivation)). The MCI's state is its VMs' ` + "`dominant_state`" + `. What stays
family-only, in Go: the MCI's status text, ` + "`partial`" + ` flag, ` + "`status_count`" + ` and
` + "`target_action`/`target_status`" + ` (` + "`tumblebug.mci_status`" + `); a Blazar lease's status from its
events' types (` + "`blazar.lease_status`" + `); and the cross-object ` + "`invariants`" + `
(` + "`blazar.lease_consistency`, `tumblebug.mci_aggregate`" + `). A user kind cannot define a
family function or an invariant.
`)
	for _, t := range allObjects() {
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n## %s\n\n%s\n", t.Ref, t.Word, typeDocs[t.Ref])
		if t.Shape == lifecycle.ShapePhase {
			b.WriteString("\nWritten as a string, a phase is just its `state`.\n")
		}
		b.WriteString("\n| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n")
		for _, k := range t.Keys {
			d := keyDocs[k.Field]
			def := d.Default
			switch {
			case d.Required:
				def = "required"
			case def == "":
				def = "—"
			}
			desc := d.Doc
			if len(d.Enum) > 0 {
				desc += " One of " + codeList(d.Enum) + "."
			}
			if len(k.Was) > 0 {
				desc += " Formerly " + codeList(k.Was) + " (still loads, with a warning)."
			}
			fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s |\n", k.Name, anchor(t, k), typeText(k, d), def, desc)
		}
		for _, k := range t.Keys {
			d := keyDocs[k.Field]
			fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n**%s.%s**\n\n```yaml\n%s\n```\n", anchor(t, k), t.Ref, k.Name, d.Example)
		}
	}
	return b.Bytes()
}

func anchor(t *lifecycle.FormatType, k *lifecycle.FormatKey) string {
	return t.Ref + "-" + strings.ReplaceAll(k.Name, "_", "-")
}

func codeList(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = "`" + x + "`"
	}
	return strings.Join(out, ", ")
}

// typeText says what a key's value is, linking object types to their section.
func typeText(k *lifecycle.FormatKey, d keyDoc) string {
	t := k.Type
	if t.Shape == lifecycle.ShapeList && t.Elem != nil {
		t = t.Elem
	}
	text := d.Type
	if text == "" {
		text = k.Type.Word
	}
	if t.Ref != "" {
		return fmt.Sprintf("%s ([%s](#%s))", text, t.Word, t.Ref)
	}
	return text
}

// allObjects lists the format's object types, the file first, each once.
func allObjects() []*lifecycle.FormatType {
	var out []*lifecycle.FormatType
	var walk func(t *lifecycle.FormatType)
	walk = func(t *lifecycle.FormatType) {
		if t == nil {
			return
		}
		if t.Ref != "" {
			if slices.Contains(out, t) {
				return
			}
			out = append(out, t)
		}
		for _, k := range t.Keys {
			walk(k.Type)
		}
		walk(t.Elem)
	}
	walk(lifecycle.Format())
	return out
}

// allKeys lists every key of every object type.
func allKeys() []*lifecycle.FormatKey {
	var out []*lifecycle.FormatKey
	for _, t := range allObjects() {
		out = append(out, t.Keys...)
	}
	return out
}

// durationPattern matches the Go duration strings a spec's durations are written in.
const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// KindsJSONSchema renders the JSON Schema (draft 2020-12) of the kind file format, for
// editors, from the Go types and their doc table.
func KindsJSONSchema() []byte {
	defs := map[string]any{}
	for _, t := range allObjects() {
		if t.Ref == "file" {
			continue
		}
		defs[t.Ref] = objectSchema(t)
	}
	root := objectSchema(lifecycle.Format())
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://raw.githubusercontent.com/lifecyclesim/terraform-provider-lifecycle/main/lifecycle/kinds.schema.json"
	root["title"] = "lifecyclesim kind file"
	root["$comment"] = "Generated from the Go types of lifecycle/ by go run ./internal/kindsdoc (make generate): do not edit."
	root["$defs"] = defs
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func objectSchema(t *lifecycle.FormatType) map[string]any {
	props := map[string]any{}
	var required []string
	for _, k := range t.Keys {
		d := keyDocs[k.Field]
		s := valueSchema(k.Type, d)
		s["description"] = d.Doc
		if d.Default != "" {
			s["$comment"] = "default: " + d.Default
		}
		props[k.Name] = s
		if d.Required {
			required = append(required, k.Name)
		}
		for _, was := range k.Was {
			old := valueSchema(k.Type, d)
			old["deprecated"] = true
			old["description"] = fmt.Sprintf("Deprecated: write %q instead. %s", k.Name, d.Doc)
			props[was] = old
		}
	}
	out := map[string]any{
		"type":                 "object",
		"description":          typeDocs[t.Ref],
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		out["required"] = required
	}
	if t.Shape == lifecycle.ShapePhase {
		return map[string]any{
			"description": typeDocs[t.Ref],
			"oneOf":       []any{map[string]any{"type": "string"}, out},
		}
	}
	return out
}

// valueSchema is the schema of one value of type t; an object type is a reference.
func valueSchema(t *lifecycle.FormatType, d keyDoc) map[string]any {
	enum := func(s map[string]any) map[string]any {
		if len(d.Enum) > 0 {
			s["enum"] = d.Enum
		}
		return s
	}
	switch t.Shape {
	case lifecycle.ShapeString:
		return enum(map[string]any{"type": "string"})
	case lifecycle.ShapeBool:
		return map[string]any{"type": "boolean"}
	case lifecycle.ShapeInt:
		return map[string]any{"type": "integer"}
	case lifecycle.ShapeNumber:
		return map[string]any{"type": "number"}
	case lifecycle.ShapeDuration:
		return map[string]any{"type": "string", "pattern": durationPattern}
	case lifecycle.ShapeAny:
		return map[string]any{}
	case lifecycle.ShapeNames:
		return map[string]any{"oneOf": []any{
			map[string]any{"type": "string"},
			map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}}
	case lifecycle.ShapeObject, lifecycle.ShapePhase:
		return map[string]any{"$ref": "#/$defs/" + t.Ref}
	case lifecycle.ShapeList:
		return map[string]any{"type": "array", "items": valueSchema(t.Elem, keyDoc{})}
	case lifecycle.ShapeMap:
		s := map[string]any{"type": "object", "additionalProperties": valueSchema(t.Elem, keyDoc{})}
		if len(d.Enum) > 0 {
			s["propertyNames"] = map[string]any{"enum": d.Enum}
		}
		return s
	}
	return map[string]any{}
}
