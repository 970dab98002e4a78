package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

func (r *kindResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	cfg := r.cfg
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed: true, Description: "The object's ID.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"name": schema.StringAttribute{
			Required: true, Description: "Name of the object. Changing it replaces the object.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			Validators:    []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"state": schema.StringAttribute{
			Computed: true,
			Description: "The object's current state as last read: a static state, or a transition state " +
				"(such as `DEPLOYING`) while an action runs.",
		},
		"deletion_mode": schema.StringAttribute{
			Optional: true, Computed: true, Default: stringdefault.StaticString("destroy"),
			Description: "How `terraform destroy` removes the object: `destroy` (the default) removes it permanently; " +
				"`delete` moves it to the kind's recycle bin (`DELETED`; an attached disk goes to `TOBEDELETED`), where " +
				"the kinds that can be restored (machines, cloudspaces, disks) plan a restore in place when the " +
				"resource is declared again. The plan fails if the kind has no such mode.",
			Validators: []validator.String{stringvalidator.OneOf("destroy", "delete")},
		},
	}
	cfg.shape.resourceAttrs(cfg, attrs)
	if cfg.hasStatus() {
		a := schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "The desired static state. Checked at plan time: when no sequence of actions leads from the " +
				"current state to this one, the plan replaces the object (with a warning saying why) if a new one " +
				"gets there, and fails otherwise. Apply walks the shortest route, action by action.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		}
		if len(cfg.statuses) > 0 {
			a.Description += " One of " + quoted(cfg.statuses) + "."
			a.Validators = []validator.String{stringvalidator.OneOf(cfg.statuses...)}
		}
		attrs["status"] = a
	}
	if len(cfg.waitFor) > 0 {
		attrs["wait_for"] = schema.StringAttribute{Optional: true,
			Description: "A state the create waits for, besides the end of the create itself, bounded by the create timeout: one of " +
				quoted(cfg.waitFor) + ". Unset, the create returns as soon as the object exists.",
			Validators: []validator.String{stringvalidator.OneOf(cfg.waitFor...)}}
	}
	attrs["last_error"] = schema.StringAttribute{Computed: true,
		Description: "The message of the object's last failed operation (an action that failed and rolled back, a failed create), empty when the last one succeeded."}
	blocks := map[string]schema.Block{
		"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
	}
	for _, f := range cfg.fields {
		if f.block() {
			blocks[f.attr] = resourceBlock(f.field)
		} else {
			attrs[f.attr] = resourceAttribute(f.field)
		}
	}
	for _, a := range cfg.computedAttrs() {
		attrs[a.name] = a.resourceAttr()
	}
	desc := cfg.shape.describe(cfg) + "\n\n" + cfg.newerInterfacesDoc()
	resp.Schema = schema.Schema{
		Version:     cfg.shape.schemaVersion(),
		Description: desc,
		Attributes:  attrs,
		Blocks:      blocks,
	}
	markdownResourceSchema(&resp.Schema)
}

// newerInterfacesDoc says what Terraform 1.14 adds for the resource type: its list resource
// and, when the kind offers actions, its action.
func (c kindConfig) newerInterfacesDoc() string {
	typ := "lifecycle_" + c.typeName
	filters := []string{"`name`", "`state`"}
	if c.parentAttr != "" {
		filters = append([]string{"`" + c.parentAttr + "`"}, filters...)
	}
	filters = append(c.shape.filterDocs(), filters...)
	out := fmt.Sprintf("With Terraform %s+, `list %q` blocks (`terraform query`) find objects to import, filtered by %s",
		queryVersion, typ, strings.Join(filters, ", "))
	return out + c.shape.actionDoc(c, typ) + ". See the guide *Actions, list resources and identities*."
}
