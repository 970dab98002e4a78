package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

// fakeMachines stands in for lifecyclesim: a create answers with the machine DEPLOYING, and
// the long poll answers with it RUNNING.
func fakeMachines() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/machines":
			w.Header().Set("Location", "/v1/machines/m-1")
			w.WriteHeader(http.StatusAccepted)
			_ = json.NewEncoder(w).Encode(client.Object{ID: "m-1", Kind: "machine", Name: "web", State: "DEPLOYING"})
		case r.Method == http.MethodGet && r.URL.Path == "/v1/machines/m-1" && r.URL.Query().Get("wait") == "static":
			_ = json.NewEncoder(w).Encode(client.Object{ID: "m-1", Kind: "machine", Name: "web", State: "RUNNING", Static: true})
		default:
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: "not_found", Message: "no such route"}})
		}
	}))
}

func Example() {
	srv := fakeMachines() // in real use: the simulator's URL, e.g. http://127.0.0.1:8080
	defer srv.Close()

	c, err := client.New(client.Config{Endpoint: srv.URL, Token: "dev-token"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	m, err := c.Create(ctx, "machines", client.CreateRequest{Name: "web", Spec: map[string]any{"memory": 2048}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created", m.ID, "in", m.State)

	var requests int
	m, err = c.WaitStatic(ctx, "machines", m.ID, client.WaitOptions{Requests: &requests})
	if err != nil {
		log.Fatal(err) // a *client.WaitError naming the last state seen
	}
	fmt.Println(m.ID, "is", m.State, "after", requests, "request(s)")
	// Output:
	// created m-1 in DEPLOYING
	// m-1 is RUNNING after 1 request(s)
}

func ExampleError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		details, _ := json.Marshal(client.TransitionDetails{
			Kind: "machine", State: "HALTED", Action: "pause", Allowed: []string{"start", "delete", "destroy"},
		})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(client.StatusOf(client.CodeInvalidTransition))
		_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{
			Code: string(client.CodeInvalidTransition), Message: "machine m-1 is HALTED: pause is not allowed", Details: details,
		}})
	}))
	defer srv.Close()
	c, _ := client.New(client.Config{Endpoint: srv.URL})

	_, err := c.Act(context.Background(), "machines", "m-1", "pause", client.ActionRequest{})

	// Match codes with the helpers or errors.As, never with the message text.
	fmt.Println("busy:", client.IsBusy(err), "invalid transition:", client.IsInvalidTransition(err))
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code)
		if d, ok := apiErr.Transition(); ok {
			fmt.Println("from", d.State, "allowed:", d.Allowed)
		}
	}
	// Output:
	// busy: false invalid transition: true
	// 422 invalid_transition
	// from HALTED allowed: [start delete destroy]
}

func ExampleClient_WaitStatic_gone() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: "not_found", Message: "machine m-1 not found"}})
	}))
	defer srv.Close()
	c, _ := client.New(client.Config{Endpoint: srv.URL})

	// After a destroy, the object being gone is what the caller waits for.
	_, err := c.WaitStatic(context.Background(), "machines", "m-1", client.WaitOptions{})
	if client.IsNotFound(err) {
		fmt.Println("destroyed")
	}
	// Output: destroyed
}
