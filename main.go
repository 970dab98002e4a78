// Command terraform-provider-lifecycle serves the lifecycle Terraform provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/lifecyclesim/terraform-provider-lifecycle/provider"
)

// version is set by the linker at release time.
var version = "dev"

func main() {
	var debug bool
	var showVersion bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.BoolVar(&showVersion, "version", false, "print the version and exit")
	flag.Parse()
	if showVersion {
		fmt.Println("terraform-provider-lifecycle", version)
		return
	}
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/lifecyclesim/lifecycle",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
