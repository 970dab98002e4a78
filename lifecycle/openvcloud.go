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

// Link makes an action point an object at another one through a spec field: attaching a disk
// names the machine it attaches to, which must exist and be in one of States. Actions in
// ClearedBy remove the field again (detaching).
type Link struct {
	Kind, Action, Field string
	Target              string
	States              []string
	ClearedBy           []string
}

// Links lists the built-in links.
var Links = []Link{
	{Kind: "disk", Action: "attach", Field: "machine_id", Target: "machine",
		States: []string{"RUNNING", "PAUSED", "HALTED"}, ClearedBy: []string{"detach"}},
}

// LinksFor returns the links of an action of a kind: those it sets, and those it clears
// (cleared reports which).
func LinksFor(kind, action string) (sets, clears []Link) {
	for _, l := range Links {
		if l.Kind != kind {
			continue
		}
		if l.Action == action {
			sets = append(sets, l)
		}
		for _, c := range l.ClearedBy {
			if c == action {
				clears = append(clears, l)
			}
		}
	}
	return sets, clears
}
