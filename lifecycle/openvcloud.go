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
	// Unlink clears the related objects' Link field (their machine is gone for good).
	Unlink bool
}

// Cascades lists the built-in cascades.
var Cascades = []Cascade{
	{Kind: "machine", To: "DELETED", RelatedKind: "disk", Link: "machine_id", RelatedFrom: "ASSIGNED", RelatedTo: "TOBEDELETED"},
	{Kind: "machine", To: "HALTED", From: "DELETED", RelatedKind: "disk", Link: "machine_id", RelatedFrom: "TOBEDELETED", RelatedTo: "ASSIGNED"},
	// Not in the seed: destroying a running machine does not destroy its attached disks (data
	// outlives the VM): they are detached. Purging a deleted machine purges the disks deleted
	// with it from the recycle bin too.
	{Kind: "machine", To: "DESTROYED", RelatedKind: "disk", Link: "machine_id", RelatedFrom: "ASSIGNED", RelatedTo: "CREATED", Unlink: true},
	{Kind: "machine", To: "DESTROYED", RelatedKind: "disk", Link: "machine_id", RelatedFrom: "TOBEDELETED", RelatedTo: "DESTROYED"},
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
	// Restoring an attached disk alone attaches it again: its machine must be there.
	{Kind: "disk", Action: "restore_attached", Field: "machine_id", Target: "machine",
		States: []string{"RUNNING", "PAUSED", "HALTED"}},
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
