package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/internal/freeport"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/httpapi"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore/sqlitetest"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The PostgreSQL tests share one throwaway cluster, started on first use (package pgtest).
func TestMain(m *testing.M) { pgtest.Main(m) }

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestParseFlags(t *testing.T) {
	defaults := config{addr: "127.0.0.1:7575", db: "lifecyclesim.db", timeScale: 1, tokens: tokenFlags{}, healAfter: 10 * time.Minute, seed: 1}
	tests := []struct {
		name string
		args []string
		env  func(string) string
		want config
	}{
		{"defaults", nil, env(), defaults},
		{
			"flags",
			[]string{"--addr", ":9000", "--db", ":memory:", "--time-scale", "0.01", "--kinds", "k.yaml",
				"--heal-after", "2m", "--seed", "42", "--token", "acme=s3cret", "-token", "beta=t2,gamma=t3"},
			env(),
			config{addr: ":9000", db: ":memory:", timeScale: 0.01, kinds: "k.yaml", healAfter: 2 * time.Minute, seed: 42,
				tokens: tokenFlags{"s3cret": "acme", "t2": "beta", "t3": "gamma"}},
		},
		{
			"environment twins",
			nil,
			env("LIFECYCLESIM_ADDR", "0.0.0.0:1", "LIFECYCLESIM_DB", "/tmp/x.db", "LIFECYCLESIM_TIME_SCALE", "0.5",
				"LIFECYCLESIM_KINDS", "mine.yaml", "LIFECYCLESIM_HEAL_AFTER", "30s", "LIFECYCLESIM_SEED", "7",
				"LIFECYCLESIM_TOKENS", "acme=a1, beta=b1"),
			config{addr: "0.0.0.0:1", db: "/tmp/x.db", timeScale: 0.5, kinds: "mine.yaml", healAfter: 30 * time.Second, seed: 7,
				tokens: tokenFlags{"a1": "acme", "b1": "beta"}},
		},
		{
			"flags win over the environment",
			[]string{"--addr", ":2", "--time-scale", "3", "--token", "acme=flag"},
			env("LIFECYCLESIM_ADDR", ":1", "LIFECYCLESIM_TIME_SCALE", "x2", "LIFECYCLESIM_TOKENS", "acme=env"),
			config{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, tt.env)
			if tt.name == "flags win over the environment" {
				// A bad environment value is reported even when a flag would override it.
				if err == nil || !strings.Contains(err.Error(), "LIFECYCLESIM_TIME_SCALE") {
					t.Fatalf("parseFlags with a bad LIFECYCLESIM_TIME_SCALE = %v, want an error naming it", err)
				}
				got, err = parseFlags(tt.args, env("LIFECYCLESIM_ADDR", ":1", "LIFECYCLESIM_TIME_SCALE", "2", "LIFECYCLESIM_TOKENS", "acme=env"))
				if err != nil {
					t.Fatal(err)
				}
				if got.addr != ":2" || got.timeScale != 3 || !maps.Equal(got.tokens, tokenFlags{"flag": "acme"}) {
					t.Errorf("parseFlags = %+v, want the flags' values and only the flag's token", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%q) = %v", tt.args, err)
			}
			if got.addr != tt.want.addr || got.db != tt.want.db || got.timeScale != tt.want.timeScale || got.kinds != tt.want.kinds ||
				got.healAfter != tt.want.healAfter || got.seed != tt.want.seed || !maps.Equal(got.tokens, tt.want.tokens) {
				t.Errorf("parseFlags(%q) = %+v, want %+v", tt.args, *got, tt.want)
			}
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  func(string) string
		want string
	}{
		{"bad time scale", []string{"--time-scale", "fast"}, env(), "time-scale"},
		{"zero time scale", []string{"--time-scale", "0"}, env(), "--time-scale must be positive"},
		{"negative time scale", []string{"--time-scale=-1"}, env(), "--time-scale must be positive"},
		{"bad heal-after", []string{"--heal-after", "soon"}, env(), "heal-after"},
		{"zero heal-after", []string{"--heal-after", "0s"}, env(), "--heal-after must be positive"},
		{"bad seed", []string{"--seed", "-1"}, env(), "seed"},
		{"bad token", []string{"--token", "nopair"}, env(), "TENANT=TOKEN"},
		{"empty token", []string{"--token", "acme="}, env(), "TENANT=TOKEN"},
		{"unknown flag", []string{"--port", "80"}, env(), "port"},
		{"positional argument", []string{"serve"}, env(), `unexpected argument "serve"`},
		{"env time scale", nil, env("LIFECYCLESIM_TIME_SCALE", "x"), "LIFECYCLESIM_TIME_SCALE"},
		{"env zero time scale", nil, env("LIFECYCLESIM_TIME_SCALE", "0"), "--time-scale must be positive"},
		{"env heal-after", nil, env("LIFECYCLESIM_HEAL_AFTER", "1"), "LIFECYCLESIM_HEAL_AFTER"},
		{"env seed", nil, env("LIFECYCLESIM_SEED", "one"), "LIFECYCLESIM_SEED"},
		{"env tokens", nil, env("LIFECYCLESIM_TOKENS", "acme"), "LIFECYCLESIM_TOKENS"},
		{"two stores", []string{"--db", "x.db", "--postgres", "postgres://h/db"}, env(), "--db x.db and --postgres choose two stores"},
		{"env two stores", nil, env("LIFECYCLESIM_DB", ":memory:", "LIFECYCLESIM_POSTGRES", "postgres://h/db"), "choose two stores"},
		{"negative journal", []string{"--journal-size=-1"}, env(), "--journal-size must be from 0 (off) to 100000"},
		{"huge journal", nil, env("LIFECYCLESIM_JOURNAL_SIZE", "1000000"), "--journal-size must be from 0 (off) to 100000"},
		{"huge journal bodies", []string{"--journal-body-bytes", "1000000"}, env(), "--journal-body-bytes from 0 to 65536"},
		{"profiles on every interface", []string{"--pprof-addr", "0.0.0.0:6060"}, env(), "--pprof-addr 0.0.0.0:6060 is not a loopback address"},
		{"profiles on a host name", nil, env("LIFECYCLESIM_PPROF_ADDR", "sim:6060"), "served on 127.0.0.1, [::1] or localhost only (write 127.0.0.1:6060)"},
		{"profiles without a port", []string{"--pprof-addr", "127.0.0.1"}, env(), "is not a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args, tt.env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseFlags(%q) = %v, want an error mentioning %q", tt.args, err, tt.want)
			}
		})
	}
	if _, err := parseFlags([]string{"-h"}, env()); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	if err := run(context.Background(), []string{"-h"}, env(), nil); err != nil {
		t.Errorf("run(-h) = %v, want nil", err)
	}
}

// started is a simulator run() serves in the background.
type started struct {
	url  string
	stop func() error
}

func start(t *testing.T, args ...string) started {
	t.Helper()
	return startEnv(t, env(), args...)
}

// startEnv is start with an environment.
func startEnv(t *testing.T, getenv func(string) string, args ...string) started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, getenv, func(a net.Addr) { addr <- a }) }()
	var s started
	select {
	case a := <-addr:
		s.url = "http://" + a.String()
	case err := <-done:
		cancel()
		t.Fatalf("run(%q) = %v before listening", args, err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("run did not start listening")
	}
	stopped := false
	s.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("run did not stop")
			return nil
		}
	}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

func call(t *testing.T, method, url, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

type object struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Static bool   `json:"static"`
}

// writeGadgetKinds writes a kind file of one user kind, gadget, into dir and returns its path.
func writeGadgetKinds(t *testing.T, dir string) string {
	t.Helper()
	kinds := filepath.Join(dir, "kinds.yaml")
	if err := os.WriteFile(kinds, []byte(`
kinds:
  - name: gadget
    family: mine
    collection: gadgets
    states: {static: [OFF, ON], transition: [BOOTING]}
    failure: {rollback: true}
    create: {to: OFF}
    actions:
      - {name: boot, from: [OFF], via: [BOOTING], to: ON}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return kinds
}

func TestRunSmoke(t *testing.T) {
	dir := t.TempDir()
	kinds := writeGadgetKinds(t, dir)
	db := filepath.Join(dir, "sim.db")
	args := []string{"--addr", "127.0.0.1:0", "--db", db, "--time-scale", "0.001", "--token", "acme=s3cret", "--kinds", kinds}
	s := start(t, args...)

	if code, body := call(t, http.MethodGet, s.url+"/healthz", "", nil); code != http.StatusOK {
		t.Fatalf("/healthz = %d %s", code, body)
	}
	if code, body := call(t, http.MethodGet, s.url+"/v1/kinds", "", nil); code != http.StatusUnauthorized || !strings.Contains(string(body), `"unauthorized"`) {
		t.Errorf("/v1/kinds without a token = %d %s, want 401", code, body)
	}
	code, body := call(t, http.MethodPost, s.url+"/v1/accounts", "s3cret", map[string]any{"name": "acme"})
	if code != http.StatusCreated {
		t.Fatalf("create account = %d %s", code, body)
	}
	var acct object
	_ = json.Unmarshal(body, &acct)
	code, body = call(t, http.MethodPost, s.url+"/v1/cloudspaces", "s3cret", map[string]any{"name": "net", "parent_id": acct.ID})
	if code != http.StatusAccepted {
		t.Fatalf("create cloudspace = %d %s", code, body)
	}
	var cs object
	_ = json.Unmarshal(body, &cs)
	waitFor := func(url, want string) {
		t.Helper()
		for range 100 {
			code, body := call(t, http.MethodGet, url+"?wait=static&timeout=5s", "s3cret", nil)
			var o object
			if err := json.Unmarshal(body, &o); code != http.StatusOK || err != nil {
				t.Fatalf("long-poll = %d %s", code, body)
			}
			if o.Static {
				if o.State != want {
					t.Fatalf("%s settled in %s, want %s", url, o.State, want)
				}
				return
			}
		}
		t.Fatalf("%s never settled", url)
	}
	waitFor(s.url+"/v1/cloudspaces/"+cs.ID, "DEPLOYED")

	// The user's kinds are served next to the built-in ones.
	code, body = call(t, http.MethodPost, s.url+"/v1/gadgets", "s3cret", map[string]any{"name": "g"})
	if code != http.StatusCreated {
		t.Fatalf("create gadget = %d %s", code, body)
	}
	var g object
	_ = json.Unmarshal(body, &g)
	if code, body := call(t, http.MethodPost, s.url+"/v1/gadgets/"+g.ID+"/actions/boot", "s3cret", nil); code != http.StatusAccepted {
		t.Fatalf("boot = %d %s", code, body)
	}
	waitFor(s.url+"/v1/gadgets/"+g.ID, "ON")

	if code, body := call(t, http.MethodGet, s.url+"/metrics", "", nil); code != http.StatusOK ||
		!strings.Contains(string(body), `lifecyclesim_objects{kind="cloudspace",state="DEPLOYED"} 1`) ||
		!strings.Contains(string(body), "lifecyclesim_transitions_total") ||
		!strings.Contains(string(body), "lifecyclesim_http_request_duration_seconds") ||
		!strings.Contains(string(body), `lifecyclesim_build_info{go_version="`+runtime.Version()+`",version="`+appVersion()+`"} 1`) ||
		!strings.Contains(string(body), "lifecyclesim_objects_overdue 0") {
		t.Errorf("/metrics = %d\n%s", code, body)
	}

	// The request journal (on by default) answers what the tenant sent.
	if code, body := call(t, http.MethodGet, s.url+"/v1/sim/journal?path=/v1/gadgets&method=POST", "s3cret", nil); code != http.StatusOK ||
		!strings.Contains(string(body), `"path":"/v1/gadgets/`+g.ID+`/actions/boot","status":202`) {
		t.Errorf("journal = %d\n%s", code, body)
	}

	// A long-poll in flight does not hold up the shutdown.
	if code, body := call(t, http.MethodPost, s.url+"/v1/cloudspaces/"+cs.ID+"/actions/disable", "s3cret", nil); code != http.StatusAccepted {
		t.Fatalf("disable = %d %s", code, body)
	}
	if err := s.stop(); err != nil {
		t.Fatalf("run returned %v after its context ended, want nil", err)
	}

	// The file store keeps everything for the next start.
	s2 := start(t, args...)
	code, body = call(t, http.MethodGet, s2.url+"/v1/cloudspaces/"+cs.ID, "s3cret", nil)
	if code != http.StatusOK {
		t.Fatalf("cloudspace after a restart = %d %s", code, body)
	}
	waitFor(s2.url+"/v1/cloudspaces/"+cs.ID, "DISABLED")
	if err := s2.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestParseFlagsPostgres(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  func(string) string
		want string
	}{
		{"flag", []string{"--postgres", "postgres://flag/db"}, env(), "postgres://flag/db"},
		{"environment twin", nil, env("LIFECYCLESIM_POSTGRES", "postgres://env/db"), "postgres://env/db"},
		{"flag wins", []string{"--postgres", "postgres://flag/db"}, env("LIFECYCLESIM_POSTGRES", "postgres://env/db"), "postgres://flag/db"},
		{"default db with it", []string{"--db", defaultDB, "--postgres", "postgres://flag/db"}, env(), "postgres://flag/db"},
	}
	for _, tt := range tests {
		cfg, err := parseFlags(tt.args, tt.env)
		if err != nil || cfg.postgres != tt.want {
			t.Errorf("%s: parseFlags(%q) = %+v, %v, want postgres %q", tt.name, tt.args, cfg, err, tt.want)
		}
	}
}

// --postgres keeps the objects in PostgreSQL: the simulator serves from it, /readyz pings it,
// and a restart finds everything there.
func TestRunPostgres(t *testing.T) {
	url := pgtest.Database(t)
	args := []string{"--addr", "127.0.0.1:0", "--postgres", url, "--time-scale", "0.001"}
	s := start(t, args...)
	if code, body := call(t, http.MethodGet, s.url+"/readyz", "", nil); code != http.StatusOK {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	code, body := call(t, http.MethodPost, s.url+"/v1/accounts", "", map[string]any{"name": "acme"})
	if code != http.StatusCreated {
		t.Fatalf("create account = %d %s", code, body)
	}
	var acct object
	_ = json.Unmarshal(body, &acct)
	code, body = call(t, http.MethodPost, s.url+"/v1/cloudspaces", "", map[string]any{"name": "net", "parent_id": acct.ID})
	if code != http.StatusAccepted {
		t.Fatalf("create cloudspace = %d %s", code, body)
	}
	var cs object
	_ = json.Unmarshal(body, &cs)
	settled := func(base string) object {
		t.Helper()
		for range 100 {
			code, body := call(t, http.MethodGet, base+"/v1/cloudspaces/"+cs.ID+"?wait=static&timeout=5s", "", nil)
			var o object
			if err := json.Unmarshal(body, &o); code != http.StatusOK || err != nil {
				t.Fatalf("long-poll = %d %s", code, body)
			}
			if o.Static {
				return o
			}
		}
		t.Fatal("the cloudspace never settled")
		return object{}
	}
	if o := settled(s.url); o.State != "DEPLOYED" {
		t.Fatalf("the cloudspace settled in %s, want DEPLOYED", o.State)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	s2 := start(t, args...)
	if o := settled(s2.url); o.State != "DEPLOYED" {
		t.Errorf("after a restart the cloudspace is %s, want DEPLOYED", o.State)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("kinds:\n  - name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clash := filepath.Join(dir, "clash.yaml")
	if err := os.WriteFile(clash, []byte("kinds:\n  - name: machine\n    collection: machines2\n    states: {static: [A]}\n    create: {to: A}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"missing kinds file", []string{"--db", ":memory:", "--kinds", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{"invalid kinds file", []string{"--db", ":memory:", "--kinds", bad}, "bad.yaml"},
		{"kind clashing with a built-in", []string{"--db", ":memory:", "--kinds", clash}, "duplicate kind name"},
		{"unusable db path", []string{"--db", filepath.Join(dir, "missing", "sim.db")}, "sim.db"},
		{"address in use", []string{"--db", ":memory:", "--addr", ln.Addr().String()}, "address already in use"},
		{"bad flag", []string{"--time-scale", "0"}, "--time-scale"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := run(ctx, tt.args, env(), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%q) = %v, want an error mentioning %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestParseFlagsOperations(t *testing.T) {
	// A bad environment value never stops --help.
	if _, err := parseFlags([]string{"--help"}, env("LIFECYCLESIM_TIME_SCALE", "x2")); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseFlags(--help) with a bad LIFECYCLESIM_TIME_SCALE = %v, want flag.ErrHelp", err)
	}
	// The error names the variable, the value and what a good value looks like.
	_, err := parseFlags(nil, env("LIFECYCLESIM_HEAL_AFTER", "5"))
	if want := `LIFECYCLESIM_HEAL_AFTER="5" is not valid for --heal-after: want a duration`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("parseFlags with LIFECYCLESIM_HEAL_AFTER=5 = %v, want %q", err, want)
	}
	cfg, err := parseFlags(nil, env())
	if err != nil || cfg.logFormat != "text" || cfg.logLevel != slog.LevelInfo {
		t.Fatalf("parseFlags() = %+v, %v, want text logs at info", cfg, err)
	}
	cfg, err = parseFlags([]string{"--log-format", "json"}, env("LIFECYCLESIM_LOG_LEVEL", "debug"))
	if err != nil || cfg.logFormat != "json" || cfg.logLevel != slog.LevelDebug {
		t.Fatalf("parseFlags(--log-format json) with LIFECYCLESIM_LOG_LEVEL=debug = %+v, %v", cfg, err)
	}
	for _, tt := range []struct {
		name string
		args []string
		env  func(string) string
		want string
	}{
		{"bad log format", []string{"--log-format", "xml"}, env(), "log-format"},
		{"bad log level", []string{"--log-level", "loud"}, env(), "log-level"},
		{"env log format", nil, env("LIFECYCLESIM_LOG_FORMAT", "xml"), `LIFECYCLESIM_LOG_FORMAT="xml" is not valid for --log-format: want text or json`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseFlags(tt.args, tt.env); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseFlags(%q) = %v, want an error mentioning %q", tt.args, err, tt.want)
			}
		})
	}
}

// The connection bounds' flags, their environment twins and their defaults.
func TestParseFlagsConnections(t *testing.T) {
	cfg, err := parseFlags(nil, env())
	if err != nil || cfg.maxPendingPerAddr != 256 || cfg.headerTimeout != 5*time.Second || cfg.bodyTimeout != 10*time.Second ||
		cfg.idleTimeout != 30*time.Second || len(cfg.proxyAddrs) != 0 {
		t.Fatalf("defaults = %+v, %v", cfg, err)
	}
	cfg, err = parseFlags([]string{"--max-pending-per-addr", "8", "--header-timeout", "2s", "--body-timeout", "3s", "--idle-timeout", "4s",
		"--proxy-addrs", "10.0.0.5, 192.168.1.0/24,::1"}, env())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.maxPendingPerAddr != 8 || cfg.headerTimeout != 2*time.Second || cfg.bodyTimeout != 3*time.Second || cfg.idleTimeout != 4*time.Second ||
		cfg.proxyAddrs.String() != "10.0.0.5/32,192.168.1.0/24,::1/128" {
		t.Errorf("flags = %+v", cfg)
	}
	cfg, err = parseFlags(nil, env("LIFECYCLESIM_PROXY_ADDRS", "172.16.0.0/12", "LIFECYCLESIM_MAX_PENDING_PER_ADDR", "9"))
	if err != nil || cfg.proxyAddrs.String() != "172.16.0.0/12" || cfg.maxPendingPerAddr != 9 {
		t.Errorf("environment twins = %+v, %v", cfg, err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--proxy-addrs", "lb.internal"}, `"lb.internal" is not an IP address or CIDR prefix (write 10.0.0.5 or 10.0.0.0/24)`},
		{[]string{"--max-pending-per-addr", "0"}, "--max-pending-per-addr, --header-timeout, --body-timeout and --idle-timeout must be positive"},
		{[]string{"--body-timeout", "0s"}, "must be positive"},
		{[]string{"--idle-timeout", "soon"}, "idle-timeout"},
	} {
		if _, err := parseFlags(tt.args, env()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseFlags(%q) = %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestUsage(t *testing.T) {
	var buf bytes.Buffer
	fs := newFlagSet(&config{tokens: tokenFlags{}})
	fs.SetOutput(&buf)
	usage(fs)()
	for _, want := range []string{"Usage:", "lifecyclesim healthcheck", "Examples:", "--log-format format",
		"[LIFECYCLESIM_TIME_SCALE]", "[LIFECYCLESIM_TOKENS]", "/docs",
		"--max-pending-per-addr connections", "--proxy-addrs addresses", "--header-timeout", "--body-timeout", "--idle-timeout",
		"--journal-size", "lifecyclesim wait static COLL ID", "LIFECYCLE_ENDPOINT", "--fixtures file", "[LIFECYCLESIM_FIXTURES]", "check --fixtures FILE"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("usage does not mention %q:\n%s", want, buf.String())
		}
	}
}

func TestOpenWarning(t *testing.T) {
	tests := []struct {
		name   string
		addr   net.Addr
		tokens int
		want   bool
	}{
		{"loopback v4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7575}, 0, false},
		{"loopback v6", &net.TCPAddr{IP: net.IPv6loopback, Port: 7575}, 0, false},
		{"every interface", &net.TCPAddr{IP: net.IPv4zero, Port: 7575}, 0, true},
		{"a LAN address", &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 7575}, 0, true},
		{"every interface with tokens", &net.TCPAddr{IP: net.IPv4zero, Port: 7575}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := openWarning(tt.addr, tt.tokens); (got != "") != tt.want {
				t.Errorf("openWarning(%v, %d) = %q, want a warning: %v", tt.addr, tt.tokens, got, tt.want)
			}
		})
	}
}

func TestReadyURL(t *testing.T) {
	tests := []struct{ give, want string }{
		{"127.0.0.1:7575", "http://127.0.0.1:7575/readyz"},
		{"0.0.0.0:7575", "http://127.0.0.1:7575/readyz"},
		{":8080", "http://127.0.0.1:8080/readyz"},
		{"[::]:7575", "http://[::1]:7575/readyz"},
		{"sim:7575", "http://sim:7575/readyz"},
	}
	for _, tt := range tests {
		if got, err := readyURL(tt.give); err != nil || got != tt.want {
			t.Errorf("readyURL(%q) = %q, %v, want %q", tt.give, got, err, tt.want)
		}
	}
	if _, err := readyURL("7575"); err == nil {
		t.Error("readyURL(7575) = nil error, want one")
	}
}

func TestHealthcheck(t *testing.T) {
	s := start(t, "--addr", "127.0.0.1:0", "--db", ":memory:")
	addr := strings.TrimPrefix(s.url, "http://")
	var out bytes.Buffer
	if err := healthcheck(context.Background(), []string{"--addr", addr}, env(), &out); err != nil {
		t.Fatalf("healthcheck against a running simulator = %v", err)
	}
	if !strings.Contains(out.String(), `"status":"ready"`) {
		t.Errorf("healthcheck printed %q, want the /readyz answer", out.String())
	}
	// The environment twin of --addr is honoured, as in a container.
	if err := healthcheck(context.Background(), nil, env("LIFECYCLESIM_ADDR", addr), io.Discard); err != nil {
		t.Errorf("healthcheck with LIFECYCLESIM_ADDR = %v", err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if err := healthcheck(context.Background(), []string{"--addr", addr, "--timeout", "1s"}, env(), io.Discard); err == nil {
		t.Error("healthcheck against a stopped simulator = nil, want an error")
	}
	if err := run(context.Background(), []string{"version"}, env(), nil); err != nil {
		t.Errorf("run(version) = %v", err)
	}
}

func TestNewLoggerJSON(t *testing.T) {
	var buf bytes.Buffer
	newLogger(&buf, "json", slog.LevelInfo).Debug("hidden")
	newLogger(&buf, "json", slog.LevelInfo).Info("shown", "k", 1)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "shown" {
		t.Errorf("JSON log = %q (%v), want one JSON line for the info message", buf.String(), err)
	}
}

// A tenant at the fault-rule cap is told to delete some (DELETE /v1/sim/faults/{id}) first:
// doing so makes room, with the rules in memory and in a database replicas share.
func TestRunFaultRuleCap(t *testing.T) {
	tests := []struct {
		name string
		args func(t *testing.T) []string
	}{
		{"memory", func(*testing.T) []string { return []string{"--db", ":memory:"} }},
		{"postgres", func(t *testing.T) []string { return []string{"--postgres", pgtest.Database(t)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, append([]string{"--addr", "127.0.0.1:0"}, tt.args(t)...)...)
			add := func() (int, []byte) {
				return call(t, http.MethodPost, s.url+"/v1/sim/faults", "", map[string]any{"mode": "fail", "kind": "machine"})
			}
			var first struct {
				ID string `json:"id"`
			}
			for i := range engine.MaxFaultRules {
				code, body := add()
				if code != http.StatusCreated {
					t.Fatalf("rule %d = %d %s", i+1, code, body)
				}
				if i == 0 {
					_ = json.Unmarshal(body, &first)
				}
			}
			code, body := add()
			if code != http.StatusForbidden || !strings.Contains(string(body), "DELETE /v1/sim/faults/{id}") {
				t.Fatalf("a rule over the cap = %d %s, want 403 saying to DELETE /v1/sim/faults/{id}", code, body)
			}
			if code, body := call(t, http.MethodDelete, s.url+"/v1/sim/faults/"+first.ID, "", nil); code != http.StatusNoContent {
				t.Fatalf("DELETE /v1/sim/faults/%s = %d %s", first.ID, code, body)
			}
			if code, body := add(); code != http.StatusCreated {
				t.Errorf("a rule after deleting one at the cap = %d %s, want 201", code, body)
			}
		})
	}
}

// TestSQLiteJournalMetrics: /metrics, as the binary wires it, shows the journal's counters under the names
// `make bench-scale` reads to wait until a server's journal is checkpointed.
func TestSQLiteJournalMetrics(t *testing.T) {
	s := sqlitetest.Open(t, filepath.Join(t.TempDir(), "metrics.db"))
	for i := range 3 {
		if err := s.Commit(t.Context(), store.Batch{Writes: []store.Write{{Object: storetest.NewObject(fmt.Sprint("m", i), "acme", "machine")}}}); err != nil {
			t.Fatal(err)
		}
	}
	storetest.Checkpointed(t, s)
	mfs, err := httpapi.NewMetrics(metricsSources(s)).Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "lifecyclesim_store_") {
			got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	for name, want := range map[string]float64{
		"lifecyclesim_store_journal_commits_total":      3,
		"lifecyclesim_store_checkpointed_commits_total": 3,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v (all: %v)", name, got[name], want, got)
		}
	}
	if got["lifecyclesim_store_checkpoints_total"] < 1 || got["lifecyclesim_store_checkpoint_seconds_total"] <= 0 {
		t.Errorf("checkpoints and their time = %v, %v; want at least one, taking some time (all: %v)",
			got["lifecyclesim_store_checkpoints_total"], got["lifecyclesim_store_checkpoint_seconds_total"], got)
	}
}

// A SQLite file whose log is damaged is refused with a message that names --accept-log-loss;
// run with it, lifecyclesim starts (and then the file is an ordinary one again).
func TestRunAcceptLogLoss(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sim.db")
	s := sqlitetest.Open(t, path)
	m := storetest.NewObject("m1", "acme", "machine")
	storetest.MustCreate(t, s, m, storetest.NewEvent(m, "DEPLOYING"))
	// The files as a crash leaves them (the store is open), with the log zeroed.
	crashed := filepath.Join(dir, "crashed.db")
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(crashed+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(crashed+"-log", make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--db", crashed, "--addr", "127.0.0.1:0"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, args, env(), nil)
	if err == nil || !strings.Contains(err.Error(), "--accept-log-loss") || !strings.Contains(err.Error(), crashed+"-log") {
		t.Fatalf("run(%q) = %v, want a refusal naming the log and --accept-log-loss", args, err)
	}
	for _, args := range [][]string{append(args, "--accept-log-loss"), args} {
		sim := start(t, args...)
		if code, body := call(t, http.MethodGet, sim.url+"/healthz", "", nil); code != http.StatusOK {
			t.Errorf("run(%q): /healthz = %d %s", args, code, body)
		}
		if err := sim.stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// --pprof-addr serves the runtime's profiles beside the API (what make bench-scale reads the
// live heap from), and only there.
func TestRunPprof(t *testing.T) {
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	pprofURL := "http://127.0.0.1:" + strconv.Itoa(port) + "/debug/pprof/"
	s := start(t, "--addr", "127.0.0.1:0", "--db", ":memory:", "--pprof-addr", "127.0.0.1:"+strconv.Itoa(port))
	code, body := call(t, http.MethodGet, pprofURL+"heap?gc=1&debug=1", "", nil)
	if code != http.StatusOK || !strings.HasPrefix(string(body), "heap profile: ") {
		t.Errorf("GET %sheap = %d %.200s, want a heap profile", pprofURL, code, body)
	}
	if code, _ := call(t, http.MethodGet, s.url+"/debug/pprof/heap", "", nil); code != http.StatusNotFound {
		t.Errorf("the API's /debug/pprof/heap = %d, want 404 (profiles only on --pprof-addr)", code)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
}
