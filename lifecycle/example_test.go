package lifecycle_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
)

// Builtin holds the kinds of the five seed systems; look one up by name or by the URL
// collection the simulator serves it under.
func ExampleBuiltin() {
	reg := lifecycle.Builtin()
	machine, err := reg.Kind("machine")
	if err != nil {
		panic(err)
	}
	fmt.Println(machine.Family, machine.Collection, machine.Initial)
	fmt.Println(machine.StaticStates())

	disk, _ := reg.ByCollection("disks")
	fmt.Println(disk.Name, disk.Parent.Kind)

	_, err = reg.Kind("spaceship")
	var unknown *lifecycle.UnknownKindError
	fmt.Println(errors.As(err, &unknown))
	// Output:
	// openvcloud machines VIRTUAL
	// [VIRTUAL RUNNING PAUSED HALTED DELETED]
	// disk account
	// true
}

// Parse loads a user's own kinds from a spec file's bytes; they are validated as they load.
func ExampleParse() {
	spec := []byte(`
kinds:
  - name: printer
    collection: printers
    states:
      static: [OFF, READY]
      transition: [WARMING_UP, COOLING_DOWN]
    initial: OFF
    failure: {rollback: true}
    create: {name: power_on, via: [WARMING_UP], to: READY}
    actions:
      - {name: power_off, from: [READY], via: [COOLING_DOWN], to: OFF}
`)
	kinds, err := lifecycle.Parse("printer.yaml", spec)
	if err != nil {
		panic(err)
	}
	reg := lifecycle.NewRegistry()
	if err := reg.Add(kinds...); err != nil {
		panic(err)
	}
	printer, _ := reg.Kind("printer")
	fmt.Println(printer.Allowed("OFF", false))

	// A mistake is reported with the file, the line, the kind and the field.
	_, err = lifecycle.Parse("printer.yaml", []byte(`
kinds:
  - name: printer
    collection: printers
    states: {static: [OFF, READY]}
    create: {to: ON}
`))
	fmt.Println(err)
	// Output:
	// [power_on]
	// printer.yaml:6: kind "printer": create.to: unknown state "ON"; static states are OFF, READY
}

// Allowed lists the actions a user may start from a state.
func ExampleKind_Allowed() {
	vm, _ := lifecycle.Builtin().Kind("vm")
	fmt.Println(vm.Allowed("Running", false))
	fmt.Println(vm.Allowed("Failed", false))
	// CB-Tumblebug's force skips the checks: any action may start from any static state.
	fmt.Println(vm.Allowed("Failed", true))
	// Output:
	// [suspend reboot terminate]
	// []
	// [suspend resume reboot terminate]
}

// Check tells whether an action may start from a state, with a typed error that says what is
// allowed instead.
func ExampleKind_Check() {
	machine, _ := lifecycle.Builtin().Kind("machine")
	if _, err := machine.Check("RUNNING", "stop", false); err == nil {
		fmt.Println("stop: ok")
	}

	_, err := machine.Check("DELETED", "start", false)
	var invalid *lifecycle.InvalidTransitionError
	if errors.As(err, &invalid) {
		fmt.Println(invalid.Allowed)
	}
	fmt.Println(err)
	// Output:
	// stop: ok
	// [destroy restore]
	// machine: action "start" is not allowed from state DELETED; allowed: destroy, restore
}

// Route finds the shortest sequence of actions to a desired static state, or says which
// states can be reached instead.
func ExampleKind_Route() {
	reg := lifecycle.Builtin()
	machine, _ := reg.Kind("machine")
	route, _ := machine.Route("HALTED", "", "PAUSED", false)
	for _, step := range route {
		fmt.Println(step.From, "→", step.Action, step.Via, "→", step.To)
	}

	// A transition state starts from where it lands.
	route, _ = machine.Route("STOPPING", "stop", "RUNNING", false)
	fmt.Println(route.Actions())

	node, _ := reg.Kind("node")
	_, err := node.Route("DECOMMISSIONED", "", "ENABLED", false)
	var noRoute *lifecycle.NoRouteError
	fmt.Println(errors.As(err, &noRoute), err)
	// Output:
	// HALTED → start [STARTING] → RUNNING
	// RUNNING → pause [PAUSING] → PAUSED
	// [start]
	// true node: no route from DECOMMISSIONED to ENABLED; reachable from DECOMMISSIONED: none
}

// Mermaid renders a kind as a Mermaid state diagram for the docs.
func ExampleKind_Mermaid() {
	kinds, err := lifecycle.Parse("lamp.yaml", []byte(`
kinds:
  - name: lamp
    collection: lamps
    states: {static: [OFF, ON], transition: [WARMING]}
    initial: OFF
    failure: {rollback: true}
    create: {name: switch_on, via: [WARMING], to: ON}
    actions:
      - {name: switch_off, from: [ON], to: OFF}
`))
	if err != nil {
		panic(err)
	}
	fmt.Print(kinds[0].Mermaid())
	// Output:
	// stateDiagram-v2
	//     classDef transition fill:#fff3e0,stroke:#e65100,stroke-dasharray:4 4
	//     classDef error fill:#ffebee,stroke:#c62828
	//     [*] --> OFF
	//     OFF --> WARMING: switch_on
	//     WARMING --> ON
	//     WARMING --> OFF: fails
	//     ON --> OFF: switch_off
	//     class WARMING transition
}

// AggregateMCIStatus computes a CB-Tumblebug MCI's status from its VMs.
func ExampleAggregateMCIStatus() {
	fmt.Println(lifecycle.AggregateMCIStatus([]string{"Running", "Running", "Running", "Running", "Running"}).Text)
	st := lifecycle.AggregateMCIStatus([]string{"Suspended", "Suspended", "Running", "Suspended", "Suspended"})
	fmt.Println(st.Text)
	fmt.Println(st.Dominant, st.Partial, st.Count.Suspended, st.Count.Running)
	// Output:
	// Running:5 (R:5/5)
	// Partial-Suspended:4 (R:1/5)
	// Suspended true 4 1
}

// CheckLeaseConsistency checks Blazar's lease ↔ reservation ↔ event table.
func ExampleCheckLeaseConsistency() {
	events := map[string]string{lifecycle.EventStartLease: lifecycle.EventDone, lifecycle.EventEndLease: lifecycle.EventUndone}
	fmt.Println(lifecycle.CheckLeaseConsistency("ACTIVE", []string{"active"}, events))
	fmt.Println(lifecycle.CheckLeaseConsistency("ACTIVE", []string{"pending"}, events))
	fmt.Println(lifecycle.LeaseStatusFromEvents(events))
	// Output:
	// <nil>
	// blazar: lease ACTIVE: reservation is pending, want active
	// ACTIVE
}

// LandPropagations lists what a landing does to related objects: deleting an OpenvCloud
// machine sends its attached disks to the recycle bin with it.
func ExampleKind_LandPropagations() {
	machine, _ := lifecycle.Builtin().Kind("machine")
	for _, p := range machine.LandPropagations("DELETED", "RUNNING", "delete", false) {
		fmt.Printf("%s: those in %v run %s\n", p.To, p.States, p.Run)
	}
	// Output:
	// disk objects linked by machine_id: those in [ASSIGNED] run machine_deleted
}

// CheckFiles is lifecyclesim check: every problem at its line, with what to write instead.
func ExampleCheckFiles() {
	ok := lifecycle.CheckFiles(os.Stdout, "testdata/specs/broken.yaml")
	fmt.Println("loads:", ok)
	// Output:
	// testdata/specs/broken.yaml:13: error: kind "print_job": actions[1].from[1]: unknown state "LOST"; static states are QUEUED, DONE, JAMMED
	// testdata/specs/broken.yaml:14: error: kind "print_job": actions[1].to: "PRINTING" is a transition state; a static state is needed here
	// 2 problems in testdata/specs/broken.yaml
	// loads: false
}

// Any kind may derive status fields from its children with the generic derivations.
func ExampleRegistry_Derivation() {
	d := &lifecycle.Derive{From: "bed", Use: []lifecycle.Derivation{
		{Function: lifecycle.DeriveCountIn, Status: "growing", In: []string{"GROWING"}},
		{Function: lifecycle.DeriveDominantState, Status: "mostly"},
	}}
	f, _ := lifecycle.NewRegistry().Derivation(d)
	beds := []lifecycle.View{{State: "GROWING"}, {State: "EMPTY"}, {State: "GROWING"}}
	got := f(lifecycle.View{}, beds)
	fmt.Println(got.Status["growing"], got.Status["mostly"])
	// Output: 2 GROWING
}
