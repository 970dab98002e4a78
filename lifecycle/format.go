package lifecycle

// FormatType is the kind file format's view of one value type, as the loader checks files
// against it (from the Go types' yaml tags). Package kindref generates the kind reference and
// the JSON Schema from it, so neither can drift from what the loader accepts.
type FormatType struct {
	// Word names values of the type in messages and in the reference ("action").
	Word  string
	Shape Shape
	// Keys are those of an object (or of a phase written as a mapping), in declaration order.
	Keys []*FormatKey
	// Elem is the type of a list's items or a map's values.
	Elem *FormatType
	// Ref is the anchor of an object type in the reference and in the JSON Schema ($defs);
	// empty for other types.
	Ref string
}

// FormatKey is one key of an object type of the format.
type FormatKey struct {
	// Name is the key as a kind file writes it; Was lists old names that still load, with a
	// deprecation warning.
	Name string
	Was  []string
	Type *FormatType
	// Field is the Go field ("Kind.Name"), which the reference's doc table is keyed by.
	Field string
	// Owner is the object type the key belongs to.
	Owner *FormatType
}

// Format returns the format of a whole kind file. It is a copy: changing it changes nothing
// the loader reads.
func Format() *FormatType {
	seen := map[*specType]*FormatType{}
	var conv func(t *specType) *FormatType
	conv = func(t *specType) *FormatType {
		if t == nil {
			return nil
		}
		if f, ok := seen[t]; ok {
			return f
		}
		f := &FormatType{Word: t.word, Shape: t.shape, Ref: t.ref}
		seen[t] = f
		f.Elem = conv(t.elem)
		for _, k := range t.keys {
			f.Keys = append(f.Keys, &FormatKey{Name: k.name, Was: append([]string(nil), k.was...), Type: conv(k.typ), Field: k.field, Owner: conv(k.owner)})
		}
		return f
	}
	return conv(fileType())
}
