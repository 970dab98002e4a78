package provider

import "testing"

func TestDataFieldDescription(t *testing.T) {
	tests := []struct{ give, want string }{
		{"ID of the image the machine boots from. Changing it replaces the machine.", "ID of the image the machine boots from."},
		{"Worker nodes; a change runs the update table in place.", "Worker nodes."},
		{"When the lease starts (RFC 3339). Omitted or in the past means now. It cannot change once the lease has started.", "When the lease starts (RFC 3339)."},
		{"When the lease ends (RFC 3339), after start_date. It can move while the lease is pending or active.", "When the lease ends (RFC 3339), after start_date."},
		{"Groups of identical VMs; count VMs are made per subgroup. Changing a count scales the subgroup in place.", "Groups of identical VMs; count VMs are made per subgroup."},
		{"The app's version; a new version needs a new AppInst.", "The app's version."},
		{"Number of virtual CPUs.", "Number of virtual CPUs."},
		{"Memory in MiB", "Memory in MiB."},
		{"", ""},
	}
	for _, tt := range tests {
		if got := dataFieldDescription(tt.give); got != tt.want {
			t.Errorf("dataFieldDescription(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
