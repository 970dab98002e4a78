package lifecycle

// Cascade is a change that an object reaching a state makes to related objects of another
// kind: OpenvCloud moves a deleted machine's attached disks to TOBEDELETED and brings them
// back when the machine is restored.
type Cascade struct {
	// Kind and To: the cascade fires when an object of Kind reaches To...
	Kind string
	To   string
	// ...From, when set, limits it to objects coming from that state (restore from DELETED).
	From string
	// Related objects of RelatedKind whose spec field Link holds the object's ID, in state
	// RelatedFrom, move to RelatedTo.
	RelatedKind string
	Link        string
	RelatedFrom string
	RelatedTo   string
}

// Cascades lists the built-in cascades.
var Cascades = []Cascade{
	{Kind: "machine", To: "DELETED", RelatedKind: "disk", Link: "machine_id", RelatedFrom: "ASSIGNED", RelatedTo: "TOBEDELETED"},
	{Kind: "machine", To: "HALTED", From: "DELETED", RelatedKind: "disk", Link: "machine_id", RelatedFrom: "TOBEDELETED", RelatedTo: "ASSIGNED"},
}

// CascadesFor returns the cascades fired by an object of kind moving from one static state to
// another.
func CascadesFor(kind, from, to string) []Cascade {
	var out []Cascade
	for _, c := range Cascades {
		if c.Kind == kind && c.To == to && (c.From == "" || c.From == from) {
			out = append(out, c)
		}
	}
	return out
}
