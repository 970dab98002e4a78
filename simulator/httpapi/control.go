package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lifecyclesim/terraform-provider-lifecycle/lifecycle"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/engine"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

func (s *Server) listFaults(c echo.Context) error {
	rules, err := s.engine.Faults().List(c.Request().Context(), tenant(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.FaultList{Items: rules})
}

func (s *Server) addFault(c echo.Context) error {
	var r wire.FaultRule
	if err := bind(c, &r); err != nil {
		return err
	}
	if err := s.checkFault(r); err != nil {
		return err
	}
	r, err := s.engine.Faults().Add(c.Request().Context(), tenant(c), r)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, r)
}

// checkFault refuses a rule that could never fire: an unknown kind; an action or a phase (a
// transition state) that no kind has, or not the rule's kind; a phase its action never passes
// through; a phase on an http_error rule, which matches requests.
func (s *Server) checkFault(r wire.FaultRule) error {
	kinds := s.engine.Registry().Kinds()
	if r.Kind != "" {
		k, err := s.engine.Registry().Kind(r.Kind)
		if err != nil {
			return errorf(wire.CodeInvalid, "%v", err)
		}
		kinds = []*lifecycle.Kind{k}
	}
	lacks := func(what, name string) error {
		if r.Kind == "" {
			return errorf(wire.CodeInvalid, "no kind has %s %q; GET /v1/kinds lists every kind's", what, name)
		}
		return errorf(wire.CodeInvalid, "kind %s has no %s %q; GET /v1/kinds/%s lists its actions and states", r.Kind, what, name, r.Kind)
	}
	if r.Action != "" && !slices.ContainsFunc(kinds, func(k *lifecycle.Kind) bool { _, ok := k.Action(r.Action); return ok }) {
		return lacks("action", r.Action)
	}
	if r.Phase != "" && !slices.ContainsFunc(kinds, func(k *lifecycle.Kind) bool { return k.IsTransition(r.Phase) }) {
		return lacks("transition state", r.Phase)
	}
	if r.Phase == "" {
		return nil
	}
	// A fail rule fires in an action's own phases only: an operation already failing does not
	// fail again. The other modes also act on a failure path's phases.
	through := func(k *lifecycle.Kind, a *lifecycle.Action) bool {
		if r.Mode == wire.FaultFail {
			return slices.ContainsFunc(a.Via, func(p lifecycle.Phase) bool { return p.State == r.Phase })
		}
		return a.PassesThrough(k, r.Phase)
	}
	passes := func(k *lifecycle.Kind) bool {
		if r.Action == "" {
			return slices.ContainsFunc(k.AllActions(), func(a *lifecycle.Action) bool { return through(k, a) })
		}
		a, ok := k.Action(r.Action)
		return ok && through(k, a)
	}
	if !slices.ContainsFunc(kinds, passes) {
		where := "no action passes through " + strconv.Quote(r.Phase)
		if r.Action != "" {
			where = fmt.Sprintf("action %q never passes through %q", r.Action, r.Phase)
		}
		if r.Mode == wire.FaultFail {
			where += " on its way (a failure path's phases fail no further)"
		}
		return errorf(wire.CodeInvalid, "%s; GET /v1/kinds lists each action's phases", where)
	}
	return nil
}

func (s *Server) deleteFault(c echo.Context) error {
	if err := s.engine.Faults().Delete(c.Request().Context(), tenant(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) reset(c echo.Context) error {
	if err := s.engine.Reset(c.Request().Context(), tenant(c), len(s.tokens) == 0); err != nil {
		return err
	}
	if s.journal != nil {
		s.journal.clear(tenant(c)) // the reset itself is the first entry after it
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) clockState() wire.ClockState {
	scale, _ := s.engine.Config()
	return wire.ClockState{Now: s.engine.Clock().Now(), TimeScale: scale}
}

func (s *Server) getClock(c echo.Context) error { return c.JSON(http.StatusOK, s.clockState()) }

func (s *Server) advanceClock(c echo.Context) error {
	var req wire.ClockAdvance
	if err := bind(c, &req); err != nil {
		return err
	}
	d, err := time.ParseDuration(req.Advance)
	if err != nil || d <= 0 {
		return errorf(wire.CodeInvalid, "advance %q is not a positive duration such as 1h (at most %s)", req.Advance, engine.MaxClockAdvance)
	}
	if err := s.engine.AdvanceClock(c.Request().Context(), d); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.clockState())
}

// simConfig is the body of /v1/sim/config.
type simConfig struct {
	TimeScale float64 `json:"time_scale"`
	HealAfter string  `json:"heal_after"`
}

func (s *Server) getConfig(c echo.Context) error {
	scale, heal := s.engine.Config()
	return c.JSON(http.StatusOK, simConfig{TimeScale: scale, HealAfter: heal.String()})
}

func (s *Server) putConfig(c echo.Context) error {
	scale, heal := s.engine.Config()
	req := simConfig{TimeScale: scale, HealAfter: heal.String()}
	if err := bind(c, &req); err != nil {
		return err
	}
	d, err := time.ParseDuration(req.HealAfter)
	if err != nil {
		return errorf(wire.CodeInvalid, "heal_after %q is not a duration such as 10m (at most %s)", req.HealAfter, engine.MaxHealAfter)
	}
	if err := s.engine.SetConfig(c.Request().Context(), req.TimeScale, d); err != nil {
		return err
	}
	// A new heal limit applies to operations already running, too.
	if err := s.engine.Reschedule(c.Request().Context()); err != nil {
		return err
	}
	return s.getConfig(c)
}
