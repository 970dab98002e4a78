package tumblebug

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dialect"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// StatusCount is upstream's model.StatusCountInfo.
type StatusCount struct {
	CountTotal       int `json:"countTotal"`
	CountCreating    int `json:"countCreating"`
	CountRunning     int `json:"countRunning"`
	CountFailed      int `json:"countFailed"`
	CountSuspended   int `json:"countSuspended"`
	CountRebooting   int `json:"countRebooting"`
	CountTerminated  int `json:"countTerminated"`
	CountSuspending  int `json:"countSuspending"`
	CountResuming    int `json:"countResuming"`
	CountTerminating int `json:"countTerminating"`
	CountUndefined   int `json:"countUndefined"`
}

// Location is upstream's model.Location, as far as the simulator knows it (the region).
type Location struct {
	Display string `json:"display"`
}

// VMStatus is a VM as upstream's model.VmStatusInfo answers it (the fields the simulator models).
type VMStatus struct {
	ID           string   `json:"id"`
	UID          string   `json:"uid"`
	Name         string   `json:"name"`
	Status       string   `json:"status"`
	NativeStatus string   `json:"nativeStatus"`
	TargetAction string   `json:"targetAction"`
	TargetStatus string   `json:"targetStatus"`
	CreatedTime  string   `json:"createdTime"`
	Location     Location `json:"location"`
}

// VM is a VM as upstream's model.VmInfo answers it (the fields the simulator models).
type VM struct {
	ID           string   `json:"id"`
	UID          string   `json:"uid"`
	Name         string   `json:"name"`
	SubGroupID   string   `json:"subGroupId,omitempty"`
	Status       string   `json:"status"`
	TargetAction string   `json:"targetAction"`
	TargetStatus string   `json:"targetStatus"`
	CreatedTime  string   `json:"createdTime"`
	Location     Location `json:"location"`
	SpecID       string   `json:"specId,omitempty"`
	ImageID      string   `json:"imageId,omitempty"`
	ResourceType string   `json:"resourceType,omitempty"`
}

// MciInfo is upstream's model.MciInfo, the fields the simulator models.
type MciInfo struct {
	ResourceType string            `json:"resourceType"`
	ID           string            `json:"id"`
	UID          string            `json:"uid"`
	Name         string            `json:"name"`
	Status       string            `json:"status"`
	StatusCount  StatusCount       `json:"statusCount"`
	TargetStatus string            `json:"targetStatus"`
	TargetAction string            `json:"targetAction"`
	Description  string            `json:"description"`
	Label        map[string]string `json:"label"`
	SystemLabel  string            `json:"systemLabel"`
	Vm           []VM              `json:"vm"`
}

// MciStatus is upstream's model.MciStatusInfo, the fields the simulator models.
type MciStatus struct {
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	Status       string      `json:"status"`
	StatusCount  StatusCount `json:"statusCount"`
	TargetStatus string      `json:"targetStatus"`
	TargetAction string      `json:"targetAction"`
	Vm           []VMStatus  `json:"vm"`
}

// SimpleMsg is upstream's model.SimpleMsg: control answers and every error.
type SimpleMsg struct {
	Message string `json:"message"`
}

// IDList is upstream's model.IdList.
type IDList struct {
	Output []string `json:"output"`
}

func infoOf(o *engine.Object, vms []*engine.Object) MciInfo {
	s := statusOf(o, nil)
	desc, _ := o.Spec["description"].(string)
	out := MciInfo{
		ResourceType: "mci", ID: s.ID, UID: uuidOf(o.ID), Name: s.Name, Status: s.Status, StatusCount: s.StatusCount,
		TargetStatus: s.TargetStatus, TargetAction: s.TargetAction, Description: desc, Label: map[string]string{},
		Vm: make([]VM, 0, len(vms)),
	}
	for _, v := range vms {
		out.Vm = append(out.Vm, vmOf(o.Name, v))
	}
	return out
}

// statusOf renders the MCI's status fields as the mci kind derives them (text, counts,
// target action and status), with its VMs.
func statusOf(o *engine.Object, vms []*engine.Object) MciStatus {
	text, _ := o.Status["text"].(string)
	if text == "" {
		text = o.State
	}
	ta, ts := target(o)
	if v, ok := o.Status["target_action"].(string); ok {
		ta = upper(v)
	}
	if v, ok := o.Status["target_status"].(string); ok {
		ts = v
	}
	out := MciStatus{ID: o.Name, Name: o.Name, Status: text, StatusCount: countOf(o.Status["status_count"]),
		TargetAction: ta, TargetStatus: ts, Vm: make([]VMStatus, 0, len(vms))}
	for _, v := range vms {
		out.Vm = append(out.Vm, vmOf(o.Name, v).status())
	}
	return out
}

// status is the VM's status fields.
func (vm VM) status() VMStatus {
	return VMStatus{ID: vm.ID, UID: vm.UID, Name: vm.Name, Status: vm.Status, NativeStatus: vm.Status,
		TargetAction: vm.TargetAction, TargetStatus: vm.TargetStatus, CreatedTime: vm.CreatedTime, Location: vm.Location}
}

// vmName is a VM's ID within its MCI: its simulator name without the MCI's name
// (subgroup-n, as upstream names VMs).
func vmName(mci *engine.Object, vm *engine.Object) string {
	return strings.TrimPrefix(vm.Name, mci.Name+"-")
}

// vmOf renders a VM of the MCI named mci.
func vmOf(mci string, v *engine.Object) VM {
	str := func(k string) string { s, _ := v.Spec[k].(string); return s }
	ta, ts := target(v)
	spec := ""
	if c, r, s := str("csp"), str("region"), str("spec"); c != "" {
		spec = c + "+" + r + "+" + s
	}
	id := strings.TrimPrefix(v.Name, mci+"-")
	return VM{ID: id, UID: uuidOf(v.ID), Name: id, SubGroupID: str("subgroup"), Status: v.State,
		TargetAction: ta, TargetStatus: ts, CreatedTime: v.CreatedAt.UTC().Format(time.DateTime),
		Location: Location{Display: str("region")}, SpecID: spec, ImageID: str("image"), ResourceType: "vm"}
}

// target is an object's running action and its target status as upstream names them
// ("None" when none runs).
func target(o *engine.Object) (action, status string) {
	if o.Op == nil {
		return "None", "None"
	}
	return upper(o.Op.Action), "None"
}

// upper capitalises an action as upstream's constants (Create, Suspend, …); None stays.
func upper(s string) string {
	if s == "" {
		return "None"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func countOf(v any) StatusCount {
	m, _ := v.(map[string]any)
	n := func(k string) int {
		switch x := m[k].(type) {
		case float64:
			return int(x)
		case int:
			return x
		case int64:
			return int(x)
		}
		return 0
	}
	return StatusCount{
		CountTotal: n("count_total"), CountCreating: n("count_creating"), CountRunning: n("count_running"),
		CountFailed: n("count_failed"), CountSuspended: n("count_suspended"), CountRebooting: n("count_rebooting"),
		CountTerminated: n("count_terminated"), CountSuspending: n("count_suspending"), CountResuming: n("count_resuming"),
		CountTerminating: n("count_terminating"), CountUndefined: n("count_undefined"),
	}
}

// uuidOf is an engine ID's UUID (the object's uid).
func uuidOf(id string) string {
	if u, ok := dialect.UUID(id); ok {
		return u
	}
	return id
}

// errorAnswers answers errors as CB-Tumblebug does: a SimpleMsg, with no name; an MCI that
// cannot move now (busy, or not from this status) is a 409.
var errorAnswers = dialect.Errors{
	AsError: engine.AsError,
	Body:    func(_ int, _, msg string) any { return SimpleMsg{Message: msg} },
}

func writeError(w http.ResponseWriter, err error) { errorAnswers.Write(w, err) }

// notFound is the answer for an MCI the namespace does not hold.
func notFound(name string) error {
	return &dialect.Error{Status: http.StatusNotFound, Message: fmt.Sprintf("The mci %s does not exist in namespace %s", name, Namespace)}
}

// engineError answers the engine's not_found for an MCI as notFound, and other errors with
// the MCI named by its name (its ID in the namespace) where the engine names its /v1 ID.
func engineError(name, id string, err error) error {
	we := engine.AsError(err)
	if we.Code == wire.CodeNotFound {
		return notFound(name)
	}
	if strings.Contains(we.Message, id) {
		named := *we
		named.Message = strings.ReplaceAll(we.Message, "mci "+id, "MCI "+name)
		named.Message = strings.ReplaceAll(named.Message, id, name)
		return &named
	}
	return err
}
