package sahara

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// answerDate is how Sahara answers its dates (oslo's isotime without a zone).
const answerDate = "2006-01-02T15:04:05"

// NodeGroup is one of a cluster's (or a cluster template's) node groups as Sahara answers it.
type NodeGroup struct {
	Name                string   `json:"name"`
	Count               int64    `json:"count"`
	FlavorID            string   `json:"flavor_id"`
	NodeProcesses       []string `json:"node_processes"`
	NodeGroupTemplateID string   `json:"node_group_template_id"`
	Instances           []any    `json:"instances"`
	VolumesPerNode      int      `json:"volumes_per_node"`
}

// answer is the common part of Sahara's objects: everything but the plugin's version field,
// which v1.1 calls hadoop_version and v2 plugin_version, and the owner, tenant_id or
// project_id.
type answer map[string]any

// versioned sets the fields API version v names differently.
func (a answer) versioned(v apiVersion, pluginVersion, tenant string) answer {
	if v == v2 {
		a["plugin_version"], a["project_id"] = pluginVersion, project(tenant)
	} else {
		a["hadoop_version"], a["tenant_id"] = pluginVersion, project(tenant)
	}
	return a
}

// ngtAnswer renders a node group template.
func ngtAnswer(v apiVersion, o *engine.Object) answer {
	return answer{
		"id": uuidOf(o.ID), "name": o.Name, "plugin_name": o.Spec["plugin_name"], "flavor_id": o.Spec["flavor"],
		"node_processes": strs(o.Spec["processes"]), "description": str(o.Spec, "description"),
		"auto_security_group": false, "security_groups": nil, "availability_zone": nil,
		"floating_ip_pool": nil, "volumes_per_node": 0, "volumes_size": 0, "volume_type": nil,
		"volume_local_to_instance": false, "volume_mount_prefix": "/volumes/disk",
		"volumes_availability_zone": nil, "use_autoconfig": true, "is_proxy_gateway": false,
		"is_default": false, "is_protected": false, "is_public": false, "node_configs": map[string]any{},
		"image_id": nil, "shares": []any{}, "boot_from_volume": false, "boot_volume_type": nil,
		"boot_volume_availability_zone": nil, "boot_volume_local_to_instance": false, "created_at": date(o.CreatedAt), "updated_at": nil,
	}.versioned(v, str(o.Spec, "hadoop_version"), o.Tenant)
}

// ctAnswer renders a cluster template, its node groups' flavors and processes read from their
// node group templates (left empty for one that is gone).
func (h *Handler) ctAnswer(ctx context.Context, v apiVersion, o *engine.Object) answer {
	refs := specRefs(o.Spec)
	groups := make([]NodeGroup, 0, len(refs))
	k, _ := h.kind(ngtKind)
	for _, g := range refs {
		ng := NodeGroup{Name: g.name, Count: g.count, NodeGroupTemplateID: uuidOf(g.template), NodeProcesses: []string{}, Instances: []any{}}
		if k != nil {
			if t, err := h.eng.Get(ctx, o.Tenant, k, g.template); err == nil {
				ng.FlavorID, ng.NodeProcesses = str(t.Spec, "flavor"), strs(t.Spec["processes"])
			}
		}
		groups = append(groups, ng)
	}
	return answer{
		"id": uuidOf(o.ID), "name": o.Name, "plugin_name": o.Spec["plugin_name"], "description": str(o.Spec, "description"),
		"node_groups": groups, "anti_affinity": []string{}, "use_autoconfig": true, "is_default": false,
		"is_protected": false, "is_public": false, "domain_name": nil, "default_image_id": nullable(str(o.Spec, "default_image_id")),
		"cluster_configs": map[string]any{}, "neutron_management_network": nil, "shares": []any{},
		"created_at": date(o.CreatedAt), "updated_at": nil,
	}.versioned(v, str(o.Spec, "hadoop_version"), o.Tenant)
}

// str is a spec's string field ("" when unset).
func str(spec map[string]any, key string) string {
	s, _ := spec[key].(string)
	return s
}

// strs is a spec's list of strings.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Cluster is a cluster as Sahara answers it: v1.1 gives HadoopVersion and TenantID, v2
// PluginVersion and ProjectID.
type Cluster struct {
	ID                       string         `json:"id"`
	Name                     string         `json:"name"`
	PluginName               string         `json:"plugin_name"`
	HadoopVersion            string         `json:"hadoop_version,omitempty"`
	PluginVersion            string         `json:"plugin_version,omitempty"`
	TenantID                 string         `json:"tenant_id,omitempty"`
	ProjectID                string         `json:"project_id,omitempty"`
	Status                   string         `json:"status"`
	StatusDescription        string         `json:"status_description"`
	Description              string         `json:"description"`
	ClusterTemplateID        *string        `json:"cluster_template_id"`
	DefaultImageID           *string        `json:"default_image_id"`
	NodeGroups               []NodeGroup    `json:"node_groups"`
	AntiAffinity             []string       `json:"anti_affinity"`
	UseAutoconfig            bool           `json:"use_autoconfig"`
	UserKeypairID            *string        `json:"user_keypair_id"`
	Info                     map[string]any `json:"info"`
	IsTransient              bool           `json:"is_transient"`
	IsPublic                 bool           `json:"is_public"`
	IsProtected              bool           `json:"is_protected"`
	NeutronManagementNetwork *string        `json:"neutron_management_network"`
	ClusterConfigs           map[string]any `json:"cluster_configs"`
	ProvisionProgress        []any          `json:"provision_progress"`
	Shares                   []any          `json:"shares"`
	DomainName               *string        `json:"domain_name"`
	CreatedAt                any            `json:"created_at"`
	UpdatedAt                any            `json:"updated_at"`
}

// clusterAnswer renders a cluster: the engine's object, with the templates it was made from
// (as its spec records them, by UUID) and its image.
func (h *Handler) clusterAnswer(v apiVersion, o *engine.Object) Cluster {
	list, _ := o.Spec["node_groups"].([]any)
	groups := make([]NodeGroup, 0, len(list))
	for _, item := range list {
		g, _ := item.(map[string]any)
		ng := NodeGroup{Instances: none, NodeProcesses: strs(g["processes"])}
		ng.Name, _ = g["name"].(string)
		ng.FlavorID, _ = g["flavor"].(string)
		ng.Count = integer(g["count"])
		if t := str(g, "node_group_template_id"); t != "" {
			ng.NodeGroupTemplateID = uuidOf(t)
		}
		groups = append(groups, ng)
	}
	c := Cluster{
		ID: uuidOf(o.ID), Name: o.Name, Status: o.State, StatusDescription: statusDescription(o), Description: str(o.Spec, "description"),
		DefaultImageID: nullable(str(o.Spec, "default_image_id")), NodeGroups: groups,
		AntiAffinity: noStrings, UseAutoconfig: true, Info: noFields, ClusterConfigs: noFields,
		ProvisionProgress: none, Shares: none, CreatedAt: date(o.CreatedAt), UpdatedAt: date(o.UpdatedAt),
	}
	if ct := str(o.Spec, "cluster_template_id"); ct != "" {
		c.ClusterTemplateID = nullable(uuidOf(ct))
	}
	c.PluginName = str(o.Spec, "plugin_name")
	version := str(o.Spec, "hadoop_version")
	if v == v2 {
		c.PluginVersion, c.ProjectID = version, project(o.Tenant)
	} else {
		c.HadoopVersion, c.TenantID = version, project(o.Tenant)
	}
	return c
}

// The empty lists and objects Sahara answers for what the simulator does not model, shared by
// every answer (they are only encoded, never changed).
var (
	none      = []any{}
	noStrings = []string{}
	noFields  = map[string]any{}
)

// statusDescription is the cluster's last recorded error (a failed create or scale), as
// Sahara's status_description gives why a cluster is in Error or why its last scale was
// rolled back; empty when none was recorded.
func statusDescription(o *engine.Object) string {
	le, _ := o.Status["last_error"].(map[string]any)
	msg, _ := le["message"].(string)
	if msg == "" {
		return ""
	}
	action, _ := le["action"].(string)
	switch action {
	case "scale":
		return "Scaling cluster failed for the following reason(s): " + msg
	case "create":
		return "Creating cluster failed for the following reason(s): " + msg
	}
	return msg
}

func integer(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// uuidOf is an engine ID's UUID (the ID itself for one the dialects cannot map, which no
// object made by the engine has).
func uuidOf(id string) string {
	if u, ok := dialect.UUID(id); ok {
		return u
	}
	return id
}

// project names a tenant as an OpenStack project ("default" for the open tenant).
func project(tenant string) string {
	if tenant == "" {
		return "default"
	}
	return tenant
}

func date(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(answerDate)
}

// ErrorBody is Sahara's error answer.
type ErrorBody = dialect.OpenStackError

// errorAnswers answers errors as Sahara does: with its error names, INTERNAL_SERVER_ERROR for
// a server error; a cluster that cannot move now (busy, or not from this status) is Sahara's
// 409.
var errorAnswers = dialect.Errors{
	AsError: engine.AsError,
	Names: map[wire.Code]string{
		wire.CodeNotFound:          "NOT_FOUND",
		wire.CodeBusy:              "CLUSTER_ACTION_ERROR",
		wire.CodeInvalidTransition: "CLUSTER_ACTION_ERROR",
		wire.CodeConflict:          "CLUSTER_ACTION_ERROR",
		wire.CodeInvalid:           "INVALID_DATA",
		wire.CodeUnauthorized:      "UNAUTHORIZED",
		wire.CodeForbidden:         "FORBIDDEN",
		wire.CodeRateLimited:       "TOO_MANY_REQUESTS",
		wire.CodeUnavailable:       "SERVICE_UNAVAILABLE",
		wire.CodeTooLarge:          "REQUEST_ENTITY_TOO_LARGE",
		wire.CodeKeyReused:         "INVALID_DATA",
	},
	ServerName: "INTERNAL_SERVER_ERROR",
	Body:       dialect.OpenStackBody,
}

func writeError(w http.ResponseWriter, err error) { errorAnswers.Write(w, err) }

// notFound is Sahara's answer for an object ID it does not hold.
func notFound(what, id string) error {
	return &dialect.Error{Status: http.StatusNotFound, Name: "NOT_FOUND", Message: fmt.Sprintf("%s id '%s' not found", what, id)}
}

// notFoundOr answers the engine's not_found for a cluster as Sahara does, other errors as they are.
func notFoundOr(uuid string, err error) error { return notFoundAs("Cluster", uuid, err) }

// notFoundAs answers the engine's not_found for an object Sahara calls what as Sahara does,
// other errors as they are.
func notFoundAs(what, uuid string, err error) error {
	if engine.AsError(err).Code == wire.CodeNotFound {
		return notFound(what, uuid)
	}
	return err
}

// isNotFound reports whether err is the dialect's own 404.
func isNotFound(err error) bool {
	var de *dialect.Error
	return errors.As(err, &de) && de.Status == http.StatusNotFound
}
