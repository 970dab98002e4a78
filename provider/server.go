package provider

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// protocolServer is what the framework's protocol 6 server answers: every RPC of Terraform
// 1.14 included (actions, list resources, state stores).
type protocolServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

var _ protocolServer = (*stopServer)(nil)

// stopGrace bounds how long StopProvider waits for the actions it interrupted to report.
var stopGrace = 10 * time.Second

// NewServer returns the provider's protocol 6 server (what main serves): the framework's,
// except that StopProvider (Terraform's answer to Ctrl-C) returns only once every action it
// interrupted has sent its completed event, or after stopGrace.
//
// Why: terraform-plugin-go's server drops an action's events once the provider is stopped
// (tf6server's InvokeAction returns when its context is done), and the framework cancels the
// action's context in StopProvider, before terraform-plugin-go's own context ends. Without the
// wait, the error that says the action was interrupted is lost and Terraform reports "Apply
// complete!" with exit status 0.
func NewServer(version string) func() tfprotov6.ProviderServer {
	return serverOf(New(version)())
}

// serverOf is NewServer's server for a given provider (tests serve ones with user kinds).
func serverOf(prov provider.Provider) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer {
		return newStopServer(providerserver.NewProtocol6(prov)())
	}
}

// newStopServer wraps a framework server (which implements every protocolServer RPC).
func newStopServer(inner tfprotov6.ProviderServer) *stopServer {
	full, ok := inner.(protocolServer)
	if !ok {
		// A framework release without these RPCs: a build against it is broken everywhere.
		panic(fmt.Sprintf("the framework's server %T does not answer the RPCs of Terraform 1.14", inner))
	}
	return &stopServer{protocolServer: full, invokes: map[chan struct{}]bool{}}
}

// stopServer is a protocolServer whose StopProvider waits for interrupted actions.
type stopServer struct {
	protocolServer
	mu sync.Mutex
	// invokes holds a channel per action invocation whose events are not all sent; it is
	// closed when they are.
	invokes map[chan struct{}]bool
}

// InvokeAction runs the action and tracks it until its last event (the completed one) is sent.
func (s *stopServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	done := make(chan struct{})
	s.mu.Lock()
	s.invokes[done] = true
	s.mu.Unlock()
	finish := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.invokes[done] {
			delete(s.invokes, done)
			close(done)
		}
	}
	stream, err := s.protocolServer.InvokeAction(ctx, req)
	if err != nil || stream == nil || stream.Events == nil {
		finish()
		return stream, err
	}
	events := stream.Events
	stream.Events = func(push func(tfprotov6.InvokeActionEvent) bool) {
		defer finish()
		events(push)
	}
	return stream, nil
}

// StopProvider cancels what runs (the framework's), then waits until the interrupted actions
// have sent their completed events, at most stopGrace or until ctx ends.
func (s *stopServer) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	s.mu.Lock()
	running := make([]chan struct{}, 0, len(s.invokes))
	for ch := range s.invokes {
		running = append(running, ch)
	}
	s.mu.Unlock()
	resp, err := s.protocolServer.StopProvider(ctx, req)
	if err != nil {
		return resp, err
	}
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	for _, ch := range running {
		select {
		case <-ch:
		case <-grace.C:
			return resp, nil
		case <-ctx.Done():
			return resp, nil
		}
	}
	return resp, nil
}
