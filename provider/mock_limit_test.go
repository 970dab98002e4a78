package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccMockNestedListLimit checks the reason the multi_cloud_mci module's mocked test
// (tests/mocked.tftest.hcl) mocks the module instead of the resource: Terraform refuses a list
// for a computed nested list (lifecycle_mci's vms) in override_resource. When a Terraform lifts
// the limit, this fails, and the workaround's comment (and its page, PROVIDER.md) must change.
func TestAccMockNestedListLimit(t *testing.T) {
	t.Parallel()
	x := newExampleRunner(t)
	work := x.copyExample(t, "modules/multi_cloud_mci")
	if err := os.RemoveAll(filepath.Join(work, "tests")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(work, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "tests", "limit.tftest.hcl"), `mock_provider "lifecycle" {}

variables {
  name = "shop"
}

run "vms_on_the_resource" {
  override_resource {
    target = lifecycle_mci.this
    values = {
      vms = [{ name = "shop-web-1", subgroup = "web", csp = "aws", status = "Running" }]
    }
  }

  assert {
    condition     = length(output.vms) == 1
    error_message = "the mocked VMs are ${jsonencode(output.vms)}"
  }
}
`)
	out, code := x.run(t, work, nil, "test", "-no-color")
	if code == 0 || !strings.Contains(out, "expected object type, found tuple") {
		t.Errorf("terraform test with vms mocked on the resource: exit code %d, want the refusal the workaround is for "+
			"(expected object type, found tuple):\n%s", code, out)
	}
}
