package provider

import "github.com/hashicorp/terraform-plugin-framework/types"

func diskKind() kindConfig {
	return kindConfig{
		typeName: "disk",
		kind:     "disk",
		description: "An OpenvCloud disk in an account. Setting `machine_id` attaches it (`ASSIGNED`), clearing it detaches it (`CREATED`), " +
			"in place. A disk attached to a machine deleted into the recycle bin becomes `TOBEDELETED`; restoring the machine brings it back.",
		parentAttr: "account_id",
		parentKind: "account",
		desired: func(m *objectModel) string {
			if v, ok := m.Fields["machine_id"].(types.String); ok && v.IsUnknown() {
				return "" // known at apply
			}
			if m.str("machine_id") != "" {
				return "ASSIGNED"
			}
			return "CREATED"
		},
		params: func(m *objectModel) map[string]any {
			if id := m.str("machine_id"); id != "" {
				return map[string]any{"machine_id": id}
			}
			return map[string]any{"machine_id": nil}
		},
		via: func(prior, plan *objectModel) string {
			if old, next := prior.str("machine_id"), plan.str("machine_id"); old != "" && next != "" && old != next {
				return "CREATED" // detach from the old machine before attaching to the new one
			}
			return ""
		},
	}
}
