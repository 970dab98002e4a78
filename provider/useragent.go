package provider

// userAgent is the User-Agent of the provider's requests: the Terraform version first, as the
// AWS and Google providers send it (`Terraform/1.11.4 terraform-provider-lifecycle/0.1.0`), so
// an operator reading the simulator's logs sees which Terraform drove a request. A client that
// does not say its version (ConfigureRequest.TerraformVersion empty) leaves that part out.
func userAgent(terraformVersion, providerVersion string) string {
	ua := "terraform-provider-lifecycle/" + providerVersion
	if terraformVersion == "" {
		return ua
	}
	return "Terraform/" + terraformVersion + " " + ua
}
