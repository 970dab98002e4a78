package httpapi

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/dashboard"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
)

// mountDashboard serves the web dashboard at / and /ui/ (see package dashboard).
func (s *Server) mountDashboard() {
	var sessions dashboard.SessionStore // in memory
	if k, ok := s.engine.Sessions(); ok {
		sessions = k // replicas share them
	}
	h := echo.WrapHandler(dashboard.New(dashboard.Options{API: s, Tokens: s.tokens, Source: dashSource{s}, Sessions: sessions,
		HoldStream: func(tenant string) (func(), error) {
			release, err := s.holds.acquire(holdStream, tenant)
			if err != nil {
				return nil, errors.New(err.Message)
			}
			return release, nil
		},
		StreamLifetime: s.lifetime, TrustProxy: s.proxied, AdminToken: s.admin}))
	s.echo.GET("/", h)
	s.echo.Any("/ui/*", h)
}

// dashSource feeds the dashboard from the engine's store and change feed.
type dashSource struct{ s *Server }

var _ dashboard.Source = dashSource{}

func (d dashSource) Snapshot(ctx context.Context, tenant string) (dashboard.Snapshot, error) {
	seq := d.s.engine.ChangePosition(tenant) // before the read: a change in between is sent again, not lost
	objs, err := d.s.engine.List(ctx, tenant, engine.ListOptions{})
	if err != nil {
		return dashboard.Snapshot{}, err
	}
	snap := dashboard.Snapshot{Seq: seq}
	for _, o := range objs {
		if _, err := d.s.engine.Registry().Kind(o.Kind); err == nil {
			snap.Objects = append(snap.Objects, d.s.wire(o))
		}
	}
	return snap, nil
}

func (d dashSource) Changes(ctx context.Context, tenant, after string) (dashboard.Update, error) {
	ids, next, resync, err := d.s.engine.Changes(ctx, tenant, after)
	u := dashboard.Update{Seq: next, Resync: resync}
	if err != nil || resync {
		return u, err
	}
	for _, id := range ids {
		o, err := d.s.engine.Lookup(ctx, tenant, id)
		switch {
		case errors.Is(err, engine.ErrNotFound):
			u.Removed = append(u.Removed, id)
		case err != nil:
			return u, err
		default:
			u.Objects = append(u.Objects, d.s.wire(o))
		}
	}
	return u, nil
}

func (d dashSource) Diagram(kind string) (string, bool) {
	k, err := d.s.engine.Registry().Kind(kind)
	if err != nil {
		return "", false
	}
	return k.Mermaid(), true
}
