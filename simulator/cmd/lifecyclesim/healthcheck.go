package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck asks a running simulator whether it is ready (GET /readyz) and fails unless it
// answers 200. It needs no shell or curl, so a from-scratch container image can run it as its
// HEALTHCHECK.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("lifecyclesim healthcheck", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:7575", "`address` of the simulator; an unspecified host (0.0.0.0, :7575) means this machine ["+envName("addr")+"]")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: lifecyclesim healthcheck [--addr ADDRESS] [--timeout 3s]")
		fmt.Fprintln(fs.Output(), "\nExits 0 when the simulator at ADDRESS answers GET /readyz with 200, 1 otherwise.")
		fs.PrintDefaults()
	}
	// The same environment as the server, so a container's LIFECYCLESIM_ADDR serves both.
	if v := getenv(envName("addr")); v != "" {
		*addr = v
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("healthcheck: unexpected argument %q", fs.Arg(0))
	}
	url, err := readyURL(*addr)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s: %s", url, resp.Status, body)
	}
	fmt.Fprintf(out, "%s: %s\n", url, body)
	return nil
}

// readyURL is the /readyz URL of a listen address; an unspecified host is this machine.
func readyURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
