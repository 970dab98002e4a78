package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// StateFormat is the version of the state document (State) this build writes, and the newest
// it reads. A change that an older build would misread bumps it.
const StateFormat = 1

// exportRounds bounds how often an export reads a tenant again because it changed while it
// was read.
const exportRounds = 20

// maxImportIDBytes bounds an ID in an imported document (the engine makes IDs of a kind's name
// and 16 hex digits).
const maxImportIDBytes = 256

// State is a tenant's state as one versioned document (GET /v1/sim/export): its objects as the
// store holds them (operations, due times, relations' bookkeeping), the histories of its
// objects, live and removed, its fault rules with their firings, and the simulator's clock
// when it was read. Objects and histories are in ID order, each history in its order, so the
// same state is the same document: one imported into an empty simulator exports as it was
// (but for the tenant's name).
type State struct {
	Format     int              `json:"format"`
	Tenant     string           `json:"tenant"`
	Clock      time.Time        `json:"clock"`
	Objects    []*store.Object  `json:"objects"`
	Events     []store.Event    `json:"events"`
	FaultRules []wire.FaultRule `json:"fault_rules"`
}

// Export reads a tenant's state. What the tenant holds is read again after its histories, and
// the read starts over when an object changed meanwhile, so the document is one moment's.
func (e *Engine) Export(ctx context.Context, tenant string) (*State, error) {
	for range exportRounds {
		st, same, err := e.exportOnce(ctx, tenant)
		if err != nil || same {
			return st, err
		}
	}
	return nil, errorf(wire.CodeBusy, "the tenant's objects kept changing while they were exported; retry the export (or export a quiet tenant)")
}

// exportOnce reads a tenant's state once; same reports whether its objects were the same
// after the histories were read.
func (e *Engine) exportOnce(ctx context.Context, tenant string) (*State, bool, error) {
	objs, err := e.store.List(ctx, tenant, store.Filter{})
	if err != nil {
		return nil, false, err
	}
	removed, err := e.store.Removed(ctx, tenant)
	if err != nil {
		return nil, false, err
	}
	st := &State{Format: StateFormat, Tenant: tenant, Objects: objs, Events: []store.Event{}}
	if st.Objects == nil {
		st.Objects = []*store.Object{}
	}
	ids := make([]string, 0, len(objs)+len(removed))
	for _, o := range objs {
		ids = append(ids, o.ID)
	}
	ids = append(ids, removed...)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		evs, err := e.store.Events(ctx, tenant, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, false, err
		}
		st.Events = append(st.Events, evs...)
	}
	if st.FaultRules, err = e.faults.List(ctx, tenant); err != nil {
		return nil, false, err
	}
	st.Clock = e.clock.Now()
	again, err := e.store.List(ctx, tenant, store.Filter{})
	if err != nil {
		return nil, false, err
	}
	same := slices.EqualFunc(objs, again, func(a, b *store.Object) bool { return a.ID == b.ID && a.Version == b.Version })
	return st, same, nil
}

// ImportOptions are the choices of an import.
type ImportOptions struct {
	// AdvanceClock lets an import into a simulator whose clock is behind the document's move
	// the clock to it (the admin's right: the clock is every tenant's). Without it such an
	// import is refused.
	AdvanceClock bool
}

// Import restores a document Export wrote into an empty tenant: its objects, histories and
// fault rules as they were (IDs, versions, times, operations in flight with their due times),
// in one store transaction. The document's tenant name is replaced by tenant. A document of a
// newer format, an object of a kind this simulator does not serve, an ID the simulator holds
// (an object's, a removed object's history, a fault rule's) and a tenant that holds objects or
// rules are refused, and so is a clock behind the document's without opt.AdvanceClock; with
// it the clock is moved to the document's once the import is in, so what was due lands as it
// would have.
func (e *Engine) Import(ctx context.Context, tenant string, st *State, opt ImportOptions) error {
	im, err := e.checkState(tenant, st)
	if err != nil {
		return err
	}
	if n, err := e.store.CountObjects(ctx, tenant); err != nil {
		return err
	} else if n > 0 {
		return errorf(wire.CodeConflict, "the tenant holds %d objects: an import goes into an empty tenant; reset it first (POST /v1/sim/reset, lifecyclesim reset) or import into another tenant", n)
	}
	if have, err := e.faults.List(ctx, tenant); err != nil {
		return err
	} else if len(have) > 0 {
		return errorf(wire.CodeConflict, "the tenant holds %d fault rules: an import goes into an empty tenant; reset it first (POST /v1/sim/reset, lifecyclesim reset) or import into another tenant", len(have))
	}
	if behind := st.Clock.Sub(e.clock.Now()); behind > 0 {
		if !opt.AdvanceClock {
			return errorf(wire.CodeForbidden, "the document was exported at %s and this simulator's clock is %s behind it (clocks only move forward): import it with the admin token, which advances the clock, or advance it first (lifecyclesim clock advance %s)",
				st.Clock.Format(time.RFC3339Nano), behind, behind.Round(time.Second)+time.Second)
		}
		if err := e.checkAdvance(behind); err != nil {
			return err
		}
	}
	if err := e.faults.reserve(tenant, st.FaultRules); err != nil {
		return err
	}
	if err := e.store.Import(ctx, im); err != nil {
		var taken *store.IDTakenError
		if errors.As(err, &taken) {
			return errorf(wire.CodeConflict, "%s %s is held by this simulator already (IDs are simulator-wide, and a removed object's history keeps its ID): import into a simulator that never held it, such as a new one", taken.What, taken.ID)
		}
		return err
	}
	e.faults.keep(ctx, tenant, st.FaultRules)
	if behind := st.Clock.Sub(e.clock.Now()); behind > 0 {
		if err := e.AdvanceClock(ctx, behind); err != nil {
			return fmt.Errorf("the import is in, but the clock did not move to the document's: %w", err)
		}
	}
	for _, o := range im.Objects {
		e.hub.notify(o.ID)
	}
	e.feed.publishReset(tenant, false) // the dashboard reads the tenant again
	e.Kick()
	return nil
}

// checkAdvance refuses an advance AdvanceClock would refuse, before anything is imported.
func (e *Engine) checkAdvance(d time.Duration) error {
	if d > MaxClockAdvance {
		return errorf(wire.CodeInvalid, "the document's clock is %s ahead of this simulator's, over the %s one advance may move it", d, MaxClockAdvance)
	}
	if _, ok := e.clock.(advancer); !ok {
		return errorf(wire.CodeInvalid, "the document's clock is %s ahead of this simulator's, whose clock cannot be moved", d)
	}
	if oc, ok := e.clock.(offsetClock); ok && oc.Offset()+d > MaxClockOffset {
		return errClockLead(oc.Offset())
	}
	return nil
}

// checkState checks a document against what this simulator serves and makes it the store's
// import into tenant.
func (e *Engine) checkState(tenant string, st *State) (store.Import, error) {
	im := store.Import{Tenant: tenant, MaxObjects: e.maxObjects}
	switch {
	case st.Format > StateFormat:
		return im, errorf(wire.CodeInvalid, "the document's format is %d, newer than the %d this simulator reads: import it into a lifecyclesim as new as the one that exported it, or upgrade this one", st.Format, StateFormat)
	case st.Format < 1:
		return im, errorf(wire.CodeInvalid, "the document has no format version (format 1 to %d): import a document GET /v1/sim/export (lifecyclesim export) wrote", StateFormat)
	case st.Clock.IsZero():
		return im, errorf(wire.CodeInvalid, "the document has no clock: import a document GET /v1/sim/export (lifecyclesim export) wrote")
	}
	live := make(map[string]bool, len(st.Objects))
	for _, o := range st.Objects {
		if o == nil || o.ID == "" || len(o.ID) > maxImportIDBytes {
			return im, errorf(wire.CodeInvalid, "an object of the document has no ID, or one over %d bytes", maxImportIDBytes)
		}
		if o.Tenant != st.Tenant {
			return im, errorf(wire.CodeInvalid, "object %s is tenant %q's, not the document's (%q)", o.ID, o.Tenant, st.Tenant)
		}
		k, err := e.reg.Kind(o.Kind)
		if err != nil {
			return im, errorf(wire.CodeInvalid, "object %s is of kind %q, which this simulator does not serve: start it with the kinds file that defines %[2]q (lifecyclesim --kinds FILE), then import again", o.ID, o.Kind)
		}
		if o.Due.After(store.MaxDue) {
			return im, errorf(wire.CodeInvalid, "object %s is due at %s, after the latest time the stores keep (%s)", o.ID, o.Due.Format(time.RFC3339), store.MaxDue.Format(time.RFC3339))
		}
		if !k.HasState(o.State) {
			return im, errorf(wire.CodeInvalid, "object %s is in state %q, which kind %s has not got here: start this simulator with the kinds file the document was exported with", o.ID, o.State, o.Kind)
		}
		if live[o.ID] {
			return im, errorf(wire.CodeInvalid, "the document has object %s twice", o.ID)
		}
		live[o.ID] = true
		c := *o
		c.Tenant = tenant
		im.Objects = append(im.Objects, &c)
	}
	for _, o := range im.Objects {
		if o.ParentID != "" && !live[o.ParentID] {
			return im, errorf(wire.CodeInvalid, "object %s names parent %s, which the document has not got", o.ID, o.ParentID)
		}
	}
	im.Events = make([]store.Event, len(st.Events))
	for i, ev := range st.Events {
		if ev.Tenant != st.Tenant || len(ev.ObjectID) > maxImportIDBytes {
			return im, errorf(wire.CodeInvalid, "event %d of object %q is not of the document's tenant (%q), or its ID is over %d bytes", ev.Seq, ev.ObjectID, st.Tenant, maxImportIDBytes)
		}
		ev.Tenant = tenant
		im.Events[i] = ev
	}
	if _, err := store.CheckImport(im); err != nil {
		return im, errorf(wire.CodeInvalid, "the document's histories are not as an export writes them: each object's events together, in ID order, numbered from 1 (%v)", err)
	}
	ruleIDs := map[string]bool{}
	for i, r := range st.FaultRules {
		if r.ID == "" || len(r.ID) > maxFaultIDBytes || ruleIDs[r.ID] {
			return im, errorf(wire.CodeInvalid, "fault rule %d of the document has no ID, one over %d bytes, or one another rule has", i+1, maxFaultIDBytes)
		}
		ruleIDs[r.ID] = true
		checked, err := validFault(r)
		if err != nil {
			return im, errorf(wire.CodeInvalid, "fault rule %s: %s", r.ID, AsError(err).Message)
		}
		if checked.Kind != "" {
			if _, err := e.reg.Kind(checked.Kind); err != nil {
				return im, errorf(wire.CodeInvalid, "fault rule %s is for kind %q, which this simulator does not serve: start it with the kinds file that defines it", r.ID, checked.Kind)
			}
		}
		st.FaultRules[i] = checked
		if e.faults.shared != nil {
			data, err := json.Marshal(faultRuleStored(checked))
			if err != nil {
				return im, err
			}
			im.FaultRules = append(im.FaultRules, store.FaultRule{ID: r.ID, Tenant: tenant, Rule: data, Count: int64(r.Count), Fired: int64(r.Fired)})
		}
	}
	return im, nil
}

// faultRuleStored is a rule as Add hands it to a shared store: without its ID and firings,
// which the store's columns hold.
func faultRuleStored(r wire.FaultRule) wire.FaultRule {
	r.ID, r.Fired = "", 0
	return r
}
