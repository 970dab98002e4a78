package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// User-defined kinds get typed resources and data sources (lifecycle_<kind>) derived from
// their spec exactly as the built-in kinds' are. Terraform asks for the provider's schema
// before it reads any configuration, so the kinds come from a file named by the environment:
// LIFECYCLE_KINDS, or LIFECYCLESIM_KINDS (the simulator's --kinds twin) when it is not set, so
// that one setting serves both. Several files are separated by the OS's list separator (':').
// With neither set, the kinds come from the simulator LIFECYCLE_ENDPOINT names. The provider
// block's endpoint cannot serve: Terraform asks for the schema before it reads the block.

// Environment variables naming the user kinds files.
const (
	userKindsEnv    = "LIFECYCLE_KINDS"
	simKindsEnv     = "LIFECYCLESIM_KINDS"
	reservedSummary = "Invalid user-defined kinds"
)

// reservedTypes are the provider's own resource and data source names a kind cannot take.
var reservedTypes = []string{"object", "action", "kind"}

// userKinds are the user-defined kinds the provider was started with.
type userKinds struct {
	// env and files say where they came from (for messages): the files, or the simulator's
	// endpoint when fromSimulator.
	env           string
	files         []string
	fromSimulator bool
	// reg holds the built-in kinds and the user's; kinds are the user's, by name.
	reg   *lifecycle.Registry
	kinds []*lifecycle.Kind
	// err is why the files could not be used: the provider then has no user kinds, and
	// Configure reports it.
	err error
}

// loadUserKinds reads the user kinds files the environment names. With no file named, the
// user kinds come from the simulator LIFECYCLE_ENDPOINT names (GET /v1/kinds), so that a
// shell that points the provider at a simulator gets that simulator's typed resources without
// a second variable. None of these is no error.
func loadUserKinds() userKinds {
	env, value := userKindsEnv, os.Getenv(userKindsEnv)
	if value == "" {
		env, value = simKindsEnv, os.Getenv(simKindsEnv)
	}
	if value == "" {
		if endpoint := os.Getenv(endpointEnv); endpoint != "" {
			return loadServedKinds(context.Background(), endpoint, os.Getenv(tokenEnv))
		}
		return userKinds{}
	}
	return loadUserKindFiles(env, filepath.SplitList(value)...)
}

// Environment variables of the provider's endpoint and token (its block's defaults).
const (
	endpointEnv = "LIFECYCLE_ENDPOINT"
	tokenEnv    = "LIFECYCLE_TOKEN"
)

// servedKindsTimeout bounds the read of the simulator's kinds at start: Terraform starts the
// provider for every command, and a simulator that is not there must not hold them up (its
// absence is reported at Configure).
const servedKindsTimeout = 3 * time.Second

// loadServedKinds takes the user kinds from the simulator at endpoint: every kind it serves
// that is not built in. A simulator that cannot be read gives none (Configure says why).
func loadServedKinds(ctx context.Context, endpoint, token string) userKinds {
	c, err := client.New(client.Config{Endpoint: endpoint, Token: token, RetryMax: -1, RetryWaitMax: time.Second})
	if err != nil {
		return userKinds{}
	}
	ctx, cancel := context.WithTimeout(ctx, servedKindsTimeout)
	defer cancel()
	served, err := c.Kinds(ctx)
	if err != nil {
		return userKinds{}
	}
	u := userKinds{env: endpointEnv, files: []string{endpoint}, fromSimulator: true, reg: lifecycle.NewRegistry()}
	if err := u.reg.Add(builtinKinds.Kinds()...); err != nil {
		u.err = err
		return u
	}
	var own []*lifecycle.Kind
	for _, k := range served {
		if _, err := builtinKinds.Kind(k.Name); err != nil {
			own = append(own, k)
		}
	}
	if err := u.reg.Add(own...); err != nil {
		u.err = err
		return u
	}
	u.keep(own)
	return u
}

// loadUserKindFiles loads user kinds files next to the built-in kinds.
func loadUserKindFiles(env string, files ...string) userKinds {
	u := userKinds{env: env, files: files, reg: lifecycle.NewRegistry()}
	if err := u.reg.Add(builtinKinds.Kinds()...); err != nil {
		u.err = err
		return u
	}
	if _, err := u.reg.LoadFiles(files...); err != nil {
		u.err = err
		return u
	}
	var own []*lifecycle.Kind
	for _, k := range u.reg.Kinds() {
		if _, err := builtinKinds.Kind(k.Name); err != nil {
			own = append(own, k)
		}
	}
	u.keep(own)
	return u
}

// keep takes the user's kinds, refusing those named like the provider's own types.
func (u *userKinds) keep(own []*lifecycle.Kind) {
	var bad []string
	for _, k := range own {
		if slices.Contains(reservedTypes, k.Name) {
			bad = append(bad, fmt.Sprintf("kind %q would be lifecycle_%s, which is the provider's own; rename the kind", k.Name, k.Name))
			continue
		}
		u.kinds = append(u.kinds, k)
	}
	if len(bad) > 0 {
		u.err = fmt.Errorf("%s", strings.Join(bad, "; "))
		u.kinds = nil
	}
}

// configs are the typed resources (made false) or data-only kinds (made true) of the user kinds.
func (u userKinds) configs(made bool) []kindConfig {
	if len(u.kinds) == 0 {
		return nil
	}
	var out []kindConfig
	for _, cfg := range configsOf(u.reg, nil, made) {
		if slices.ContainsFunc(u.kinds, func(k *lifecycle.Kind) bool { return k.Name == cfg.kind }) {
			out = append(out, cfg)
		}
	}
	return out
}

// check reports, at Configure, user kinds files that could not be used, user kinds the
// simulator does not serve or serves differently, and kinds it serves that the provider has no
// typed resource for.
func (u userKinds) check(endpoint string, served []*lifecycle.Kind, diags *diag.Diagnostics) {
	where := fmt.Sprintf("%s=%s", u.env, strings.Join(u.files, string(filepath.ListSeparator)))
	if u.err != nil && u.fromSimulator {
		diags.AddError(reservedSummary, fmt.Sprintf("The kinds the simulator at %s serves (read because %s is set and %s is "+
			"not): %v\n\nRename those kinds in the simulator's kinds file and restart it. Until then the provider has no typed "+
			"resources for them; lifecycle_object still manages them.", strings.Join(u.files, ""), endpointEnv, userKindsEnv, u.err))
		return
	}
	if u.err != nil {
		diags.AddError(reservedSummary, fmt.Sprintf("%s: %v\n\nFix the file (lifecyclesim check %s lists every problem "+
			"with its fix), or unset %s. Until then the provider has no typed resources for your kinds; lifecycle_object "+
			"still manages them.", where, u.err, strings.Join(u.files, " "), u.env))
		return
	}
	byName := map[string]*lifecycle.Kind{}
	for _, k := range served {
		byName[k.Name] = k
	}
	for _, k := range u.kinds {
		s, ok := byName[k.Name]
		switch {
		case !ok:
			diags.AddError("User kind not served", fmt.Sprintf("The simulator at %s does not serve the kind %q of %s. "+
				"Start it with the same file (lifecyclesim --kinds FILE, or %s=FILE), or point %s at the file it was "+
				"started with.", endpoint, k.Name, where, simKindsEnv, userKindsEnv))
		case fingerprint(s) != fingerprint(k):
			what := "its states or actions differ"
			if fields := fieldsDiffering(k, s); len(fields) > 0 {
				what = "its declaration of " + strings.Join(fields, ", ") + " differs: type, bounds, default, `required` or another rule"
			}
			diags.AddError("User kind differs from the simulator's", fmt.Sprintf("The kind %q of %s is not the one the "+
				"simulator at %s serves (%s). Terraform's schema comes from the file "+
				"and the simulator's behaviour from its own copy, so they must be the same: restart the simulator with "+
				"the file, or point %s at the file it was started with.", k.Name, where, endpoint, what, userKindsEnv))
		}
	}
	var untyped []string
	for _, k := range served {
		if _, err := builtinKinds.Kind(k.Name); err == nil || k.MadeByParent {
			continue
		}
		if !slices.ContainsFunc(u.kinds, func(x *lifecycle.Kind) bool { return x.Name == k.Name }) {
			untyped = append(untyped, k.Name)
		}
	}
	if len(untyped) > 0 {
		slices.Sort(untyped)
		diags.AddWarning("User kinds without typed resources", fmt.Sprintf("The simulator at %s serves user-defined "+
			"kinds the provider has no typed resources for: %s. Set %s (or %s) to the kinds file the simulator was "+
			"started with, or set %s=%s (the provider then reads them from the simulator when it starts), to get "+
			"lifecycle_<kind> resources and data sources; lifecycle_object manages them meanwhile.",
			endpoint, strings.Join(untyped, ", "), userKindsEnv, simKindsEnv, endpointEnv, endpoint))
	}
}

// fingerprint sums up what a typed resource is built from: states, actions and fields.
func fingerprint(k *lifecycle.Kind) string {
	var parts []string
	parts = append(parts, "static:"+strings.Join(k.StaticStates(), ","))
	for _, a := range k.AllActions() {
		parts = append(parts, fmt.Sprintf("action:%s:%v>%s", a.Name, a.From, a.To))
	}
	for i := range k.Fields {
		parts = append(parts, "field:"+fieldFingerprint(&k.Fields[i]))
	}
	slices.Sort(parts)
	return strings.Join(parts, "|")
}

// fieldFingerprint is everything a field's declaration says that the schema or the checks use
// (type, required, default, bounds, enum, nested fields...), without its descriptions.
func fieldFingerprint(f *lifecycle.Field) string {
	b, err := json.Marshal(f)
	if err != nil {
		return f.Name
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	b, _ = json.Marshal(withoutDescriptions(v))
	return string(b)
}

// withoutDescriptions drops every "description" key of a decoded JSON value.
func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "description")
		for key, e := range x {
			x[key] = withoutDescriptions(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutDescriptions(e)
		}
	}
	return v
}

// fieldsDiffering names the fields the file's kind and the simulator's declare differently
// (or only one of them declares), in the file's order.
func fieldsDiffering(file, served *lifecycle.Kind) []string {
	var out []string
	for i := range file.Fields {
		f := &file.Fields[i]
		s, ok := served.Field(f.Name)
		if !ok || fieldFingerprint(s) != fieldFingerprint(f) {
			out = append(out, "`"+f.Name+"`")
		}
	}
	for i := range served.Fields {
		if _, ok := file.Field(served.Fields[i].Name); !ok {
			out = append(out, "`"+served.Fields[i].Name+"`")
		}
	}
	return out
}
