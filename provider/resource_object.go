package provider

import "github.com/hashicorp/terraform-plugin-framework/resource"

func objectKind() kindConfig {
	return kindConfig{
		typeName: "object",
		description: "An object of any kind the simulator serves, including user-defined kinds loaded with " +
			"`lifecyclesim --kinds FILE`. The kind's state machine is read from the simulator (`GET /v1/kinds`) and " +
			"checked at plan time exactly as for the typed resources.\n\nImport with `KIND/ID`, or with an ID " +
			"whose prefix names its kind.",
		parentAttr: "parent_id",
		parentKind: "parent",
	}
}

// NewObjectResource is lifecycle_object: the generic resource for any kind.
func NewObjectResource() resource.Resource { return newKindResource(objectKind()) }
