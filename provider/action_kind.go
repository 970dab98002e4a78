package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

var (
	_ action.ActionWithConfigure  = (*kindAction)(nil)
	_ action.ActionWithModifyPlan = (*kindAction)(nil)
)

// interruptedRead bounds the read that tells an interrupted action's last state when no
// answer had told it yet.
const interruptedRead = 2 * time.Second

// progressEvery is how often an action that waits says where the object is.
var progressEvery = 10 * time.Second

// kindAction is the Terraform action (1.14+: `action` blocks, `action_trigger`, `terraform
// apply -invoke`) of a kind with a resource: it runs one of the kind's offered actions
// (offeredActions: those that return the object to where it started, and repairs) on an
// object and waits until the object is static again. lifecycle_object's runs any kind's.
type kindAction struct {
	cfg  kindConfig
	data *providerData
}

func newKindAction(cfg kindConfig) action.Action { return &kindAction{cfg: cfg} }

func (a *kindAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + a.cfg.typeName
}

func (a *kindAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data = dataFrom(req.ProviderData, &resp.Diagnostics)
}

func (a *kindAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	cfg := a.cfg
	what := withArticle(cfg.shape.noun())
	actionAttr := schema.StringAttribute{Required: true,
		Description: "The action to run. Only actions that return the object to the state it started from, and repairs " +
			"(actions that run only from error states and take the object back where it is meant to be), are offered: " +
			"an action landing in another state would be walked back by the next plan of the object's resource, whose " +
			"`status` says where the object belongs."}
	if len(cfg.actions) > 0 {
		actionAttr.Description += " One of " + quoted(cfg.actions) + "."
		actionAttr.Validators = []validator.String{stringvalidator.OneOf(cfg.actions...)}
	}
	attrs := map[string]schema.Attribute{
		"id":     schema.StringAttribute{Required: true, Description: "ID of the object to act on, usually its resource's `id`."},
		"action": actionAttr,
		"force":  schema.BoolAttribute{Optional: true, Description: "Run the action from states it is allowed from only when forced."},
		"object_status": schema.StringAttribute{Optional: true,
			Description: "The status the object will have when the action runs, usually its resource's `status`: an action " +
				"triggered by `action_trigger` after the resource's update runs after the object reached it. The plan " +
				"checks the action against it (a value known only after apply is checked when the action runs); unset, " +
				"against the object's current state."},
		"timeout": schema.StringAttribute{Optional: true, CustomType: timetypes.GoDurationType{},
			Description: "How long the action may take, waits for the object included, as a Go duration. Defaults to `20m`.",
			Validators:  []validator.String{positiveDuration()}},
	}
	cfg.shape.actionAttrs(attrs)
	desc := fmt.Sprintf("Runs an action on %s and waits until it is static again (Terraform %s+: `action` blocks, run by "+
		"`action_trigger` in a resource's `lifecycle` or by `terraform apply -invoke=action.TYPE.NAME`). The action is "+
		"checked against the state machine at plan time where the object's state (or `object_status`) is known, and "+
		"always again before it runs: a refusal names the actions allowed. Actions on one object run one at a time; "+
		"while it waits, the action reports the object's state and the time elapsed; a failure carries the "+
		"simulator's message. With Terraform before %s, use the `lifecycle_action` resource.", what, queryVersion, queryVersion)
	resp.Schema = schema.Schema{Description: desc, MarkdownDescription: desc, Attributes: attrs}
}

// actionModel is an action block's configuration.
type kindActionModel struct {
	Kind, ID, Action, ObjectStatus types.String
	Force                          types.Bool
	Timeout                        timetypes.GoDuration
}

func (a *kindAction) model(ctx context.Context, cfg interface {
	GetAttribute(context.Context, path.Path, any) diag.Diagnostics
}) (kindActionModel, diag.Diagnostics) {
	var m kindActionModel
	var diags diag.Diagnostics
	diags.Append(cfg.GetAttribute(ctx, path.Root("id"), &m.ID)...)
	diags.Append(cfg.GetAttribute(ctx, path.Root("action"), &m.Action)...)
	diags.Append(cfg.GetAttribute(ctx, path.Root("force"), &m.Force)...)
	diags.Append(cfg.GetAttribute(ctx, path.Root("object_status"), &m.ObjectStatus)...)
	diags.Append(cfg.GetAttribute(ctx, path.Root("timeout"), &m.Timeout)...)
	kind, d := a.cfg.shape.kindIn(ctx, cfg)
	diags.Append(d...)
	m.Kind = kind
	return m, diags
}

// resolve finds the kind and the action; the action must be one a Terraform action runs.
func (a *kindAction) resolve(m kindActionModel) (*lifecycle.Kind, *lifecycle.Action, diag.Diagnostics) {
	var diags diag.Diagnostics
	k, err := a.data.kind(m.Kind.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("kind"), "Unknown kind", err.Error()+". Load user-defined kinds with `lifecyclesim --kinds FILE`.")
		return nil, nil, diags
	}
	act, ok := k.Action(m.Action.ValueString())
	offered := offeredActions(k)
	if !ok || !offers(k, act, "") {
		diags.AddAttributeError(path.Root("action"), "Action not offered",
			fmt.Sprintf("%s has no action %q that a Terraform action runs; those are %s (actions that return the object to "+
				"where they started, and repairs). Set the status on the object's resource to move it elsewhere.",
				k.Name, m.Action.ValueString(), listOr(offered, "none")))
		return nil, nil, diags
	}
	return k, act, diags
}

// ModifyPlan checks the action against the state machine before anything runs: from the
// status the object will have (object_status), or else from the state it is in now. An
// action's plan sees only its own configuration, so a value known only after apply (a new
// object's ID) is checked when the action runs.
func (a *kindAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	if a.data == nil {
		return
	}
	m, diags := a.model(ctx, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || m.Kind.IsUnknown() || m.Action.IsUnknown() || m.ObjectStatus.IsUnknown() || m.Force.IsUnknown() {
		return
	}
	k, act, diags := a.resolve(m)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	from, what := m.ObjectStatus.ValueString(), "will be"
	if m.ObjectStatus.IsNull() {
		if m.ID.IsUnknown() {
			return
		}
		o, err := a.data.reads.get(ctx, k.Collection, m.ID.ValueString())
		if err != nil {
			if client.IsNotFound(err) {
				resp.Diagnostics.AddAttributeError(path.Root("id"), "Object not found", fmt.Sprintf("No %s has the ID %q.", k.Name, m.ID.ValueString()))
			}
			return // other errors surface when the action runs
		}
		from, what = settled(k, o), "is"
	}
	if err := checkAction(k, act, from, m.Force.ValueBool()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("action"), "Action not allowed",
			fmt.Sprintf("The %s %s %s %s: %v.\n\nNothing was run.", k.Name, m.ID.ValueString(), what, from, err))
	}
}

func (a *kindAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	if !a.data.ready(&resp.Diagnostics) {
		return
	}
	m, diags := a.model(ctx, req.Config)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	k, act, diags := a.resolve(m)
	resp.Diagnostics.Append(diags...)
	timeout := durationOr(&resp.Diagnostics, m.Timeout, defaultTimeout)
	if resp.Diagnostics.HasError() {
		return
	}
	// stopped is Terraform's own context: it ends when Terraform is interrupted (Ctrl-C), not
	// when the action's timeout passes.
	stopped := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id := m.ID.ValueString()
	summary := fmt.Sprintf("Error running %s %s", k.Name, act.Name)
	p := &progress{send: resp.SendProgress, kind: k.Name, id: id, start: time.Now()}
	started := false
	// fail reports err, or the interruption when Terraform was interrupted.
	fail := func(err error) {
		if stopped.Err() != nil {
			last := p.last(err)
			if last == "" {
				// Interrupted before any answer (a long-poll held): one quick read says where it is.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(stopped), interruptedRead)
				if o, err := a.data.client.Get(rctx, k.Collection, id); err == nil {
					last = o.State
				}
				cancel()
			}
			resp.Diagnostics.AddError(fmt.Sprintf("Interrupted: %s %s", k.Name, act.Name), interruptedAction(k, act, id, last, started))
			return
		}
		resp.Diagnostics.AddError(summary, explain(err))
	}
	unlock, err := a.data.locks.lock(ctx, id)
	if err != nil {
		if stopped.Err() != nil {
			fail(err)
			return
		}
		resp.Diagnostics.AddError(summary, fmt.Sprintf("Waiting for another action on %s %s: %v.", k.Name, id, err))
		return
	}
	defer unlock()

	w := newWalker(a.data, k, id, nil)
	w.onState = p.seen
	o, err := p.during(ctx, func() (*client.Object, error) { return w.wait(ctx) })
	if err != nil {
		fail(err)
		return
	}
	from := o.State
	if err := checkAction(k, act, from, m.Force.ValueBool()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("action"), summary, fmt.Sprintf("The %s %s is %s: %v.\n\nNothing was run.", k.Name, id, from, err))
		return
	}
	p.say(fmt.Sprintf("%s %s: running %s from %s", k.Name, id, act.Name, from))
	opID := ""
	err = w.unblocked(ctx, act.Name, func() error {
		accepted, err := w.actWait(ctx, act.Name, client.ActionRequest{Force: m.Force.ValueBool()})
		if accepted != nil {
			p.seen(accepted)
			if accepted.Operation != nil {
				opID = accepted.Operation.ID
				started = true
			}
		}
		return err
	})
	if err != nil {
		fail(err)
		return
	}
	started = true
	want := from
	if isRepair(k, act) {
		want = act.To // a repair takes the object out of its error state
	}
	o, err = p.during(ctx, func() (*client.Object, error) { return w.wait(ctx) })
	switch {
	case err != nil:
	case opID != "" && failedOp(o) == opID:
		// A failed action rolls back to where it started: its recorded error tells it apart.
		err = fmt.Errorf("%s %s: action %q failed and the object is %s: %s", k.Name, id, act.Name, o.State, lastError(o))
	case o.State != want:
		err = &stepError{kind: k.Name, id: id, action: act.Name, want: want, obj: o}
	}
	if o != nil {
		a.data.reads.put(k.Collection, o)
	}
	if err != nil {
		fail(err)
		return
	}
	p.say(fmt.Sprintf("%s %s: %s done, %s after %s", k.Name, id, act.Name, o.State, p.elapsed()))
}

// interruptedAction is the detail of an action Terraform stopped (Ctrl-C): whether it had
// started, the last state seen, and what to do. The simulator does not stop with Terraform.
func interruptedAction(k *lifecycle.Kind, act *lifecycle.Action, id, last string, started bool) string {
	if !started {
		return fmt.Sprintf("Terraform was interrupted before %s started: the provider was waiting for the %s %s "+
			"to be static (last state seen: %s). Nothing was run.\n\n"+
			"Invoke the action again once the %s is static (terraform plan -refresh-only shows where it is).",
			act.Name, k.Name, id, orUnknown(last), k.Name)
	}
	return fmt.Sprintf("Terraform was interrupted while the %s %s ran %s (last state seen: %s). "+
		"The simulator carries the action on without Terraform: the %s lands in a static state on its own.\n\n"+
		"Run terraform plan -refresh-only to see where it is once it is static, and invoke the action again "+
		"if it did not finish.", k.Name, id, act.Name, orUnknown(last), k.Name)
}

// progress sends an action's progress messages: the object's state and the time elapsed,
// when the state changes and every progressEvery while it does not. Messages are sent from
// the goroutine running Invoke only: the framework takes none after Invoke returns.
type progress struct {
	send      func(action.InvokeProgressEvent)
	kind, id  string
	start     time.Time
	mu        sync.Mutex
	state     string
	announced string
}

func (p *progress) elapsed() time.Duration { return time.Since(p.start).Round(100 * time.Millisecond) }

func (p *progress) say(msg string) {
	if p.send != nil {
		p.send(action.InvokeProgressEvent{Message: msg})
	}
}

// seen records a state read (from the wait's goroutine).
func (p *progress) seen(o *client.Object) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = o.State
}

// last is the last state seen: the one a wait that ended with err names, or the last read.
func (p *progress) last(err error) string {
	var we *waitError
	if errors.As(err, &we) && we.last != "" {
		return we.last
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// report says where the object is when that changed, or always when tick.
func (p *progress) report(tick bool) {
	p.mu.Lock()
	state := p.state
	p.mu.Unlock()
	if state == "" || (!tick && state == p.announced) {
		return
	}
	p.announced = state
	p.say(fmt.Sprintf("%s %s is %s (%s elapsed)", p.kind, p.id, state, p.elapsed()))
}

// during runs wait in its own goroutine and reports progress until it returns.
func (p *progress) during(ctx context.Context, wait func() (*client.Object, error)) (*client.Object, error) {
	type result struct {
		o   *client.Object
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := wait()
		done <- result{o, err}
	}()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	changed := time.NewTicker(progressEvery / 10)
	defer changed.Stop()
	for {
		select {
		case r := <-done:
			return r.o, r.err
		case <-tick.C:
			p.report(true)
		case <-changed.C:
			p.report(false)
		}
	}
}

// objectLocks runs the actions of one provider run on an object one at a time (the simulator
// refuses a second action while one runs; waiting here keeps it from being refused).
type objectLocks struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

// lock takes the object's lock, waiting for it at most until ctx ends.
func (l *objectLocks) lock(ctx context.Context, id string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]chan struct{}{}
	}
	ch, ok := l.locks[id]
	if !ok {
		ch = make(chan struct{}, 1)
		l.locks[id] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
