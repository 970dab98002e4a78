// Package pgtest starts throwaway PostgreSQL clusters for tests: initdb into a temporary
// directory, a postgres listening on 127.0.0.1 at a free port, trust authentication, fsync
// off (unless a test measures durability), and a fresh database per test made from a template
// the store has migrated (CREATE DATABASE ... TEMPLATE, about 0.1 s).
//
// A test package that uses it runs its tests through Main, which starts the package's cluster
// in the background as the tests begin and stops it when they end:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		s, err := pgstore.Open(t.Context(), pgtest.Database(t))
//		...
//	}
//
// The binaries are Debian's (postgresql package: /usr/lib/postgresql/<version>/bin, not on
// PATH), or those of the directory $LIFECYCLESIM_POSTGRES_BIN, or initdb and postgres on
// PATH. When there are none, tests that ask for a database skip, unless
// LIFECYCLESIM_REQUIRE_POSTGRES=1 (CI sets it): then they fail. initdb refuses to run as
// root, so as root the cluster runs as the postgres user (Debian's package creates it).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lifecyclesim/terraform-provider-lifecycle/internal/freeport"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore"
)

// RequireEnv names the environment variable that turns a missing PostgreSQL from a skip into
// a failure.
const RequireEnv = "LIFECYCLESIM_REQUIRE_POSTGRES"

// BinEnv names the environment variable that points at a directory of PostgreSQL binaries.
const BinEnv = "LIFECYCLESIM_POSTGRES_BIN"

// ErrNoPostgres is returned by Start when no PostgreSQL binaries are found.
var ErrNoPostgres = errors.New("PostgreSQL binaries not found")

// Options tune a cluster.
type Options struct {
	// Durable keeps fsync on (and full page writes), for tests that measure commits as a
	// real deployment would pay for them. Off, a commit never waits for the disk.
	Durable bool
}

// Cluster is a running throwaway PostgreSQL cluster.
type Cluster struct {
	dir    string // the cluster's directory: data/, the socket and the log
	port   int
	bin    string // the directory of initdb and postgres
	owner  owner
	opts   Options
	cmd    *exec.Cmd
	exited chan struct{} // closed when postgres exits

	mu       sync.Mutex // guards admin, seq and template; serialises CREATE DATABASE
	admin    *pgx.Conn  // to the postgres database, for CREATE and DROP DATABASE
	seq      int
	template string // the migrated template, once made
	drops    sync.WaitGroup

	// spares holds migrated databases made ahead by keepSpares, so that a test does not wait
	// for its CREATE DATABASE; stopSpares ends keepSpares, which closes sparesDone.
	spares     chan string
	stopSpares chan struct{}
	sparesDone chan struct{}
}

// FindBinaries returns the directory of initdb and postgres, or ErrNoPostgres.
func FindBinaries() (string, error) {
	var dirs []string
	if d := os.Getenv(BinEnv); d != "" {
		dirs = append(dirs, d)
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(debian, func(a, b string) int { return versionOf(b) - versionOf(a) }) // newest first
	dirs = append(dirs, debian...)
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w (install Debian's postgresql package, or set %s to a directory holding initdb and postgres)", ErrNoPostgres, BinEnv)
}

// versionOf is the major version in /usr/lib/postgresql/<version>/bin.
func versionOf(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Start initialises and starts a cluster; Stop removes it.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	owner, err := clusterOwner()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lifecyclesim-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin, owner: owner, opts: opts}
	fail := func(err error) (*Cluster, error) {
		return nil, errors.Join(err, c.Stop())
	}
	if err := owner.chown(dir); err != nil {
		return fail(err)
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", c.dataDir(), "-U", "postgres",
		"--auth=trust", "--no-sync", "--encoding=UTF8", "--locale=C")
	initdb.SysProcAttr = owner.procAttr()
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w\n%s", err, out))
	}
	// A port another process takes between our probe and postgres's bind fails the start:
	// try another.
	for attempt := 1; ; attempt++ {
		port, perr := freeport.Loopback()
		if perr != nil {
			return fail(perr)
		}
		err = c.start(ctx, port)
		if err == nil {
			return c, nil
		}
		if attempt == 3 {
			return fail(err)
		}
	}
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// start runs postgres on port and waits until it takes connections.
func (c *Cluster) start(ctx context.Context, port int) error {
	bin, owner := c.bin, c.owner
	c.port = port
	durability := []string{"-c", "fsync=off", "-c", "full_page_writes=off"}
	if c.opts.Durable {
		durability = nil
	}
	log, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	if err := owner.chown(log.Name()); err != nil {
		return err
	}
	args := append([]string{"-D", c.dataDir(), "-p", strconv.Itoa(port), "-k", c.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300", "-c", "shared_buffers=64MB"}, durability...)
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = owner.procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-c.exited:
			c.cmd = nil
			return fmt.Errorf("postgres exited at start: %w\n%s", err, c.Log())
		case <-ctx.Done():
			c.kill()
			return fmt.Errorf("postgres: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.kill()
			return fmt.Errorf("postgres did not take connections within 30s: %w\n%s", err, c.Log())
		}
	}
}

// kill stops postgres at once (SIGQUIT: immediate shutdown, no checkpoint), or with SIGKILL
// when it does not end within 10 s.
func (c *Cluster) kill() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	c.cmd = nil
}

// Shutdown is how Down stops a cluster's server.
type Shutdown int

const (
	// FastShutdown is PostgreSQL's fast shutdown (SIGINT): open transactions are rolled back,
	// connections closed and a checkpoint written.
	FastShutdown Shutdown = iota + 1
	// KillPostmaster kills the postmaster alone with SIGKILL, as kill -9 does: its backends
	// end when they notice, and the next start runs crash recovery.
	KillPostmaster
)

// Down stops the cluster's server (its data directory stays) until Up starts it again.
func (c *Cluster) Down(how Shutdown) error {
	if c.cmd == nil {
		return errors.New("pgtest: the server is not running")
	}
	sig := syscall.SIGINT
	if how == KillPostmaster {
		sig = syscall.SIGKILL
	}
	if err := c.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("pgtest: signal the postmaster: %w", err)
	}
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.kill()
		return fmt.Errorf("pgtest: postgres did not stop within 30s of %s", sig)
	}
	c.cmd = nil
	return nil
}

// Up starts the server Down stopped, on the same data directory and port, and waits until it
// takes connections. After KillPostmaster the old backends may still hold the shared memory
// for a moment (postgres then refuses to start): it tries again for up to 30 s.
func (c *Cluster) Up(ctx context.Context) error {
	if c.cmd != nil {
		return errors.New("pgtest: the server is running")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.start(ctx, c.port)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Log returns the end of the cluster's server log (for failure messages).
func (c *Cluster) Log() string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// URL is the connection URL of a database of the cluster.
func (c *Cluster) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, database)
}

// PID is the process ID of the cluster's postmaster (its backends are its children): a
// benchmark counts their CPU time and pins them.
func (c *Cluster) PID() int { return c.cmd.Process.Pid }

// Exec runs statements on the cluster's postgres database.
func (c *Cluster) Exec(ctx context.Context, sql string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exec(ctx, sql)
}

// exec is Exec with c.mu held: one connection, kept open.
func (c *Cluster) exec(ctx context.Context, sql string) error {
	if c.admin == nil || c.admin.IsClosed() {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			return err
		}
		c.admin = conn
	}
	_, err := c.admin.Exec(ctx, sql)
	return err
}

// CreateDatabase makes a new database, with the store's schema when migrated is true (a copy
// of a template migrated once), and returns its name.
func (c *Cluster) CreateDatabase(ctx context.Context, migrated bool) (string, error) {
	if migrated && c.spares != nil {
		select {
		case name := <-c.spares:
			return name, nil
		default:
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	template := "template0"
	if migrated {
		if c.template == "" {
			if err := c.makeTemplate(ctx); err != nil {
				return "", err
			}
		}
		template = c.template
	}
	c.seq++
	name := "test_" + strconv.Itoa(c.seq)
	if err := c.exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+template); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return name, nil
}

// makeTemplate creates the template database and migrates it with the store (which must be
// closed again before it can be copied).
func (c *Cluster) makeTemplate(ctx context.Context) error {
	const name = "lifecyclesim_template"
	if err := c.exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return fmt.Errorf("create the template: %w", err)
	}
	s, err := pgstore.Open(ctx, c.URL(name))
	if err != nil {
		return fmt.Errorf("migrate the template: %w", err)
	}
	if err := s.Close(); err != nil {
		return err
	}
	c.template = name
	return nil
}

// keepSpares makes migrated databases ahead of the tests that will ask for them, in the
// background until Stop: a test's database is then made while the test before it runs.
func (c *Cluster) keepSpares() {
	c.spares, c.stopSpares, c.sparesDone = make(chan string, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.sparesDone)
		for {
			name, err := c.CreateDatabase(context.Background(), true)
			if err != nil {
				return // the tests make their own
			}
			select {
			case c.spares <- name:
			case <-c.stopSpares:
				return
			}
		}
	}()
}

// DropDatabase removes a database, closing the connections still open to it.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	return c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
}

// dropLater removes a database in the background (a test need not wait for it); Stop waits.
func (c *Cluster) dropLater(name string) {
	c.drops.Go(func() {
		if err := c.DropDatabase(context.Background(), name); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: drop database %s: %v\n", name, err)
		}
	})
}

// Stop stops postgres (immediate shutdown: nothing of it is kept) and removes the cluster.
func (c *Cluster) Stop() error {
	if c.stopSpares != nil {
		close(c.stopSpares)
		<-c.sparesDone
		c.stopSpares = nil
	}
	c.drops.Wait()
	c.mu.Lock()
	if c.admin != nil {
		_ = c.admin.Close(context.Background())
		c.admin = nil
	}
	c.mu.Unlock()
	c.kill()
	return os.RemoveAll(c.dir)
}

// The cluster a test package shares (see Main).
var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// startShared starts the shared cluster, with its template, once; a call while another
// starts it waits for it.
func startShared() {
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		shared.c, shared.err = Start(ctx, Options{})
		if shared.err == nil {
			shared.c.mu.Lock()
			shared.err = shared.c.makeTemplate(ctx)
			shared.c.mu.Unlock()
		}
		if shared.err == nil {
			shared.c.keepSpares()
		}
	})
}

// Main runs a test package's tests (m.Run), stops the cluster they used and exits: call it
// from TestMain. When PostgreSQL is installed the cluster starts in the background as the
// tests begin (the first test that needs it waits for it), so initdb runs beside the tests
// that come before.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with more to do after the tests: it returns m.Run's code, once
// the cluster is stopped.
func Run(m *testing.M) int {
	_, err := FindBinaries()
	early := err == nil
	if early {
		go startShared()
	}
	code := m.Run()
	if early {
		startShared() // waits for a start still under way
	}
	if shared.c != nil {
		if err := shared.c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: stop the cluster:", err)
		}
	}
	return code
}

// Shared returns the package's cluster, started on first use (or by Main). Without
// PostgreSQL binaries the test skips, or fails when RequireEnv is set; a cluster that fails to
// start fails the test.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	startShared()
	if shared.err != nil {
		Unavailable(t, shared.err)
	}
	return shared.c
}

// Unavailable ends a test that could not get a cluster: a skip when the binaries are missing
// and RequireEnv is not set, else a failure.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoPostgres) && !Required() {
		t.Skipf("PostgreSQL: %v (set %s=1 to make this a failure)", err, RequireEnv)
	}
	t.Fatalf("PostgreSQL: %v", err)
}

// Required reports whether RequireEnv asks for the PostgreSQL tests to run.
func Required() bool {
	v := strings.TrimSpace(os.Getenv(RequireEnv))
	return v != "" && v != "0" && v != "false"
}

// Database returns the URL of a new database of the shared cluster with the store's schema,
// dropped when the test ends.
func Database(t testing.TB) string {
	t.Helper()
	return database(t, true)
}

// EmptyDatabase returns the URL of a new database of the shared cluster without any schema,
// dropped when the test ends.
func EmptyDatabase(t testing.TB) string {
	t.Helper()
	return database(t, false)
}

func database(t testing.TB, migrated bool) string {
	t.Helper()
	c := Shared(t)
	name, err := c.CreateDatabase(t.Context(), migrated)
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the test opens a store on it: cleanups run last first, so the
	// store is closed by then.
	t.Cleanup(func() { c.dropLater(name) })
	return c.URL(name)
}
