package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"
)

// Faults lists the simulator's fault rules.
func (c *Client) Faults(ctx context.Context) ([]FaultRule, error) {
	var list FaultList
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/sim/faults", out: &list}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// AddFault adds a fault rule and returns it with its ID.
func (c *Client) AddFault(ctx context.Context, rule FaultRule) (*FaultRule, error) {
	// fired is the server's count, read-only in openapi.json: the request leaves it out (the
	// outer field hides the embedded one, and omitempty drops it).
	body := struct {
		FaultRule
		Fired *int `json:"fired,omitempty"`
	}{FaultRule: rule}
	var out FaultRule
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/sim/faults", body: body, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteFault removes a fault rule.
func (c *Client) DeleteFault(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("delete fault: missing fault id")
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "/v1/sim/faults/" + url.PathEscape(id)})
	return err
}

// Reset returns the simulator to its empty starting point, dropping objects, events and
// fault rules.
func (c *Client) Reset(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/sim/reset"})
	return err
}

// Clock reads the simulator's clock.
func (c *Client) Clock(ctx context.Context) (*ClockState, error) {
	var out ClockState
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/sim/clock", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// AdvanceClock moves the simulator's clock forward by d, firing what falls due (Blazar lease
// start and end dates, self-healing).
func (c *Client) AdvanceClock(ctx context.Context, d time.Duration) (*ClockState, error) {
	var out ClockState
	body := ClockAdvance{Advance: d.String()}
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/sim/clock", body: body, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// SimConfig reads the simulator's runtime configuration.
func (c *Client) SimConfig(ctx context.Context) (*SimConfig, error) {
	var out SimConfig
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/sim/config", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetConfig changes the simulator's runtime configuration (zero fields stay as they are) and
// returns the values in force.
func (c *Client) SetConfig(ctx context.Context, cfg SimConfig) (*SimConfig, error) {
	var out SimConfig
	if _, err := c.do(ctx, request{method: http.MethodPut, path: "/v1/sim/config", body: cfg, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}
