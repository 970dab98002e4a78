package kindgen

import (
	"strings"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// fields draws the subject's scalar, list and object fields.
func (g *gen) fields(k *lifecycle.Kind) {
	n := g.r.IntN(5)
	names := g.names(fieldWords, n)
	types := []lifecycle.FieldType{lifecycle.TypeString, lifecycle.TypeInteger, lifecycle.TypeNumber, lifecycle.TypeBool, lifecycle.TypeTime}
	for _, name := range names {
		f := g.scalar(name, types[g.r.IntN(len(types))], true)
		k.Fields = append(k.Fields, f)
	}
	if g.chance(0.3) {
		f := lifecycle.Field{Name: "tags", Type: lifecycle.TypeList, Items: &lifecycle.Field{Type: lifecycle.TypeString, MaxLength: 32},
			MaxItems: 5}
		g.use(FieldScalarList)
		g.use(Bounds)
		if g.chance(0.4) {
			f.MinItems = 1
			f.Required = true
			g.use(ScalarListBounds)
			g.use(Required)
		}
		k.Fields = append(k.Fields, f)
	}
	if g.chance(0.3) {
		f := lifecycle.Field{Name: "settings", Type: lifecycle.TypeObject, Fields: []lifecycle.Field{
			g.scalar("mode", lifecycle.TypeString, false),
			g.scalar("depth", lifecycle.TypeInteger, false),
		}}
		g.use(FieldObject)
		k.Fields = append(k.Fields, f)
	}
	if len(k.Fields) > 0 && g.chance(0.3) {
		i := g.r.IntN(len(k.Fields))
		if !k.Fields[i].Immutable && k.Fields[i].Type != lifecycle.TypeTime {
			k.Fields[i].UpdatableIn = []string{k.States.Static[0]}
			if k.Initial != "" && len(k.States.Static) > 1 {
				k.Fields[i].UpdatableIn = []string{k.States.Static[1]}
			}
			g.use(UpdatableIn)
		}
	}
}

// scalar draws one scalar field; top says it is a top-level field (which may be immutable).
func (g *gen) scalar(name string, t lifecycle.FieldType, top bool) lifecycle.Field {
	f := lifecycle.Field{Name: name, Type: t}
	if g.chance(0.5) {
		f.Description = "The " + strings.ReplaceAll(name, "_", " ") + " of the object."
		g.use(DescribedFields)
	}
	switch t {
	case lifecycle.TypeString:
		g.use(FieldString)
		if g.chance(0.4) {
			f.Enum = []string{"red", "green", "blue"}
			g.use(Enum)
		} else if g.chance(0.5) {
			f.MaxLength = 8 + g.r.IntN(56)
			g.use(Bounds)
		}
	case lifecycle.TypeInteger:
		g.use(FieldInteger)
		if g.chance(0.7) {
			lo, hi := float64(g.r.IntN(5)), float64(10+g.r.IntN(100))
			f.Min, f.Max = &lo, &hi
			g.use(Bounds)
		}
	case lifecycle.TypeNumber:
		g.use(FieldNumber)
		if g.chance(0.7) {
			lo, hi := 0.5, float64(10+g.r.IntN(100))+0.5
			f.Min, f.Max = &lo, &hi
			g.use(Bounds)
		}
	case lifecycle.TypeBool:
		g.use(FieldBool)
	case lifecycle.TypeTime:
		g.use(FieldTime)
	}
	switch {
	case g.chance(0.3) && top:
		f.Required = true
		g.use(Required)
	case g.chance(0.45):
		f.Default = g.defaultOf(&f)
		g.use(Defaults)
	}
	if top && g.chance(0.25) {
		f.Immutable = true
		g.use(Immutable)
	}
	return f
}

// defaultOf is a valid default value of a scalar field.
func (g *gen) defaultOf(f *lifecycle.Field) any {
	switch f.Type {
	case lifecycle.TypeString:
		if len(f.Enum) > 0 {
			return f.Enum[g.r.IntN(len(f.Enum))]
		}
		return "dflt"
	case lifecycle.TypeInteger:
		if f.Min != nil {
			return int(*f.Min) + 1
		}
		return 7
	case lifecycle.TypeNumber:
		if f.Min != nil {
			return *f.Min + 1
		}
		return 2.5
	case lifecycle.TypeBool:
		return g.chance(0.5)
	case lifecycle.TypeTime:
		return FarFuture
	}
	return nil
}
