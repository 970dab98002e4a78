package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/pgstore/pgtest"
)

// Replicas in the comparison: -systems pgN runs N lifecyclesim processes over one PostgreSQL
// database, the clients spread over them (client c on replica c mod N). PostgreSQL is a
// throwaway cluster (package pgtest: Debian's binaries, fsync on, so an accepted action is
// as durable as on the SQLite file), one database per system, pinned with the replicas to
// -server-cpu: the server side gets the same CPU as a single SQLite process, and its CPU time
// per request counts PostgreSQL's.

// replicaCount parses a pgN system name.
func replicaCount(name string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "pg"))
	return n, strings.HasPrefix(name, "pg") && err == nil && n >= 1
}

// postgres is the cluster the pg systems share, started on first use.
type postgres struct {
	once    sync.Once
	cluster *pgtest.Cluster
	err     error
}

func (p *postgres) start(ctx context.Context, cfg *config) (*pgtest.Cluster, error) {
	p.once.Do(func() {
		progress("starting PostgreSQL (fsync on)")
		if p.cluster, p.err = pgtest.Start(ctx, pgtest.Options{Durable: true}); p.err != nil {
			return
		}
		if cpus := pgCPUs(cfg); cpus != "" {
			p.err = pin(p.cluster.PID(), cpus)
		}
	})
	return p.cluster, p.err
}

func (p *postgres) stop() {
	if p.cluster != nil {
		if err := p.cluster.Stop(); err != nil {
			progress("stop PostgreSQL: %v", err)
		}
	}
}

// pgCPUs is where PostgreSQL runs: -pg-cpu, else with the servers.
func pgCPUs(cfg *config) string {
	if cfg.pgCPU != "" {
		return cfg.pgCPU
	}
	return cfg.serverCPU
}

// pin moves a process and its children (every thread) to cpus; the children it starts later
// inherit it (a postmaster's backends).
func pin(pid int, cpus string) error {
	for _, p := range procTree(pid) {
		if out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(p)).CombinedOutput(); err != nil {
			return fmt.Errorf("taskset -p %d: %v: %s", p, err, out)
		}
	}
	return nil
}

// replicaSystem is N lifecyclesim replicas over one database.
type replicaSystem struct {
	simSystem
	srvs []*server
	pg   int // the postmaster's PID
}

func (r *replicaSystem) Stop() {
	for _, s := range r.srvs {
		s.stop()
	}
}

// PIDs are the processes of the system besides PID's: the other replicas and PostgreSQL
// (shared by every pg system: its CPU time counts for the one measured).
func (r *replicaSystem) PIDs() []int {
	out := []int{r.pg}
	for _, s := range r.srvs[1:] {
		out = append(out, s.pid())
	}
	return out
}

// startReplicas starts n replicas of the lifecyclesim binary bin over a new database of the
// cluster; name is the system's (pgN, or pgN@BINARY for a build other than -sim).
func startReplicas(ctx context.Context, cfg *config, pg *postgres, name, bin string, n int) (*replicaSystem, error) {
	cluster, err := pg.start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	// Another build's replicas make their own schema: one made by this build's may be newer
	// than theirs, which they refuse.
	db, err := cluster.CreateDatabase(ctx, bin == cfg.sim)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("lifecyclesim PostgreSQL ×%d", n)
	logName := name
	if bin != cfg.sim {
		label += " (" + bin + ")"
		logName = strings.ReplaceAll(name, "/", "_")
	}
	sys := &replicaSystem{simSystem: simSystem{label: label}, pg: cluster.PID()}
	for i := range n {
		srv, api, err := launchSim(ctx, cfg, bin, label, []string{"--postgres", cluster.URL(db)}, cfg.timeScale,
			filepath.Join(cfg.workdir, fmt.Sprintf("%s-%d.log", logName, i)))
		if err != nil {
			sys.Stop()
			return nil, err
		}
		sys.srvs = append(sys.srvs, srv)
		sys.bases = append(sys.bases, api.base)
		if i == 0 {
			sys.srv, sys.api = srv, api
		}
	}
	return sys, nil
}

// writeReplicasNote says how the pg systems ran, when there are any.
func writeReplicasNote(w io.Writer, cfg *config, systems []benchSystem) {
	var names []string
	for _, s := range systems {
		if r, ok := s.(*replicaSystem); ok {
			procs := "processes"
			if len(r.srvs) == 1 {
				procs = "process"
			}
			names = append(names, fmt.Sprintf("%s (%d %s)", r.Name(), len(r.srvs), procs))
		}
	}
	if len(names) == 0 {
		return
	}
	where := "unpinned"
	switch cpus := pgCPUs(cfg); {
	case cpus == cfg.serverCPU && cpus != "":
		where = "pinned to CPU " + cpus + " with the replicas"
	case cpus != "":
		where = "pinned to CPU " + cpus + " (the replicas on CPU " + cfg.serverCPU + ")"
	}
	fmt.Fprintf(w, "Replicas: %s over one PostgreSQL cluster (Debian's, fsync and synchronous_commit on, a database per system), %s; "+
		"client c sends to replica c mod N; server CPU counts the replicas and PostgreSQL.\n", strings.Join(names, ", "), where)
}
