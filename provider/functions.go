package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

var (
	_ function.Function = (*transitionPathFunction)(nil)
	_ function.Function = (*canTransitionFunction)(nil)
)

// builtinKinds are the kinds functions know: functions run without provider configuration,
// so they use the built-in state machines, not user-defined kinds.
var builtinKinds = lifecycle.Builtin()

var kindParams = []function.Parameter{
	function.StringParameter{Name: "kind", Description: "A built-in kind, such as `machine` or `cluster_inst`."},
	function.StringParameter{Name: "from", Description: "The state to start from; a transition state starts from where it lands."},
	function.StringParameter{Name: "to", Description: "The static state to reach."},
}

var pathAttrTypes = map[string]attr.Type{
	"actions": types.ListType{ElemType: types.StringType},
	"states":  types.ListType{ElemType: types.StringType},
}

// NewTransitionPathFunction is provider::lifecycle::transition_path.
func NewTransitionPathFunction() function.Function { return &transitionPathFunction{} }

type transitionPathFunction struct{}

func (f *transitionPathFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "transition_path"
}

func (f *transitionPathFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The shortest sequence of actions between two states of a kind.",
		MarkdownDescription: "Returns an object with `actions`, the shortest list of user actions from `from` to `to`, and " +
			"`states`, the static states visited (starting state included). Fails when no route exists, naming " +
			"the states reachable instead. Uses the built-in kinds, and needs no simulator.\n\n" +
			"Provider functions need Terraform 1.8 or later.",
		Parameters: kindParams,
		Return:     function.ObjectReturn{AttributeTypes: pathAttrTypes},
	}
	markdownFunction(&resp.Definition)
}

func (f *transitionPathFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var kind, from, to string
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &kind, &from, &to))
	if resp.Error != nil {
		return
	}
	route, ferr := route(kind, from, to)
	if ferr != nil {
		resp.Error = ferr
		return
	}
	start, _ := builtinKinds.Kind(kind)
	first, _ := start.Lands(from, "")
	actions, diags := types.ListValueFrom(ctx, types.StringType, route.Actions())
	states, d2 := types.ListValueFrom(ctx, types.StringType, route.States(first))
	diags.Append(d2...)
	obj, d3 := types.ObjectValue(pathAttrTypes, map[string]attr.Value{"actions": actions, "states": states})
	diags.Append(d3...)
	resp.Error = function.ConcatFuncErrors(function.FuncErrorFromDiags(ctx, diags), resp.Result.Set(ctx, obj))
}

// route finds a route, turning lifecycle's errors into argument errors.
func route(kind, from, to string) (lifecycle.Route, *function.FuncError) {
	k, err := builtinKinds.Kind(kind)
	if err != nil {
		return nil, function.NewArgumentFuncError(0, err.Error())
	}
	r, err := k.Route(from, "", to, false)
	if err != nil {
		var us *lifecycle.UnknownStateError
		var ns *lifecycle.NotStaticError
		var am *lifecycle.AmbiguousStateError
		switch {
		case errors.As(err, &ns):
			return nil, function.NewArgumentFuncError(2, err.Error())
		case errors.As(err, &am):
			return nil, function.NewArgumentFuncError(1, err.Error())
		case errors.As(err, &us) && us.State == from:
			return nil, function.NewArgumentFuncError(1, err.Error())
		case errors.As(err, &us):
			return nil, function.NewArgumentFuncError(2, err.Error())
		}
		return nil, function.NewFuncError(err.Error())
	}
	return r, nil
}

// NewCanTransitionFunction is provider::lifecycle::can_transition.
func NewCanTransitionFunction() function.Function { return &canTransitionFunction{} }

type canTransitionFunction struct{}

func (f *canTransitionFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "can_transition"
}

func (f *canTransitionFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Whether any sequence of actions leads from one state of a kind to another.",
		MarkdownDescription: "Returns `true` when a route of user actions leads from `from` to the static state `to`, " +
			"`false` when none does. Unknown kinds or states are errors. Uses the built-in kinds, and needs no simulator.\n\n" +
			"Provider functions need Terraform 1.8 or later.",
		Parameters: kindParams,
		Return:     function.BoolReturn{},
	}
	markdownFunction(&resp.Definition)
}

func (f *canTransitionFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var kind, from, to string
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &kind, &from, &to))
	if resp.Error != nil {
		return
	}
	_, ferr := route(kind, from, to)
	if ferr != nil && ferr.FunctionArgument != nil {
		resp.Error = ferr
		return
	}
	resp.Error = resp.Result.Set(ctx, ferr == nil)
}
