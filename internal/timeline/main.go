// Command timeline prints the objects a lifecyclesim serves and the transition timeline of
// each, from the events API, plus request and transition counts from /metrics. The demo and
// the measurement script use it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/client"
)

func main() {
	endpoint := flag.String("endpoint", envOr("LIFECYCLE_ENDPOINT", "http://127.0.0.1:7575"), "simulator URL")
	kinds := flag.String("kinds", "account,cloudspace,image,machine,disk,node", "comma-separated kinds to show")
	counts := flag.Bool("counts", false, "print only request and transition totals from /metrics")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if *counts {
		err = printCounts(ctx, os.Stdout, *endpoint)
	} else {
		err = printTimeline(ctx, os.Stdout, *endpoint, strings.Split(*kinds, ","))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "timeline:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func printTimeline(ctx context.Context, w io.Writer, endpoint string, kinds []string) error {
	c, err := client.New(client.Config{Endpoint: endpoint, Token: os.Getenv("LIFECYCLE_TOKEN")})
	if err != nil {
		return err
	}
	all, err := c.Kinds(ctx)
	if err != nil {
		return err
	}
	collections := map[string]string{}
	for _, k := range all {
		collections[k.Name] = k.Collection
	}
	for _, kind := range kinds {
		coll, ok := collections[kind]
		if !ok {
			return fmt.Errorf("unknown kind %q", kind)
		}
		objs, err := c.ListAll(ctx, coll, client.ListOptions{})
		if err != nil {
			return err
		}
		for _, o := range objs {
			fmt.Fprintf(w, "%-10s %-12s %-28s %s\n", kind, o.Name, o.ID, o.State)
			evs, err := c.Events(ctx, coll, o.ID)
			if err != nil {
				return err
			}
			var start time.Time
			for i, e := range evs {
				if i == 0 {
					start = e.Time
				}
				line := fmt.Sprintf("    +%6.2fs  %-7s %-14s → %-14s %s", e.Time.Sub(start).Seconds(), e.Actor, e.From, e.To, e.Action)
				if e.Error != "" {
					line += "  error: " + e.Error
				}
				if e.Message != "" {
					line += "  (" + e.Message + ")"
				}
				fmt.Fprintln(w, strings.TrimRight(line, " "))
			}
		}
	}
	return nil
}

// printCounts sums request and transition counters from the Prometheus text format.
func printCounts(ctx context.Context, w io.Writer, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(endpoint, "/")+"/metrics", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sums := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range []string{"lifecyclesim_http_request_duration_seconds_count", "lifecyclesim_transitions_total"} {
			if strings.HasPrefix(line, name) && !strings.Contains(line, `route="/metrics"`) {
				fields := strings.Fields(line)
				v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
				sums[name] += v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "requests=%d transitions=%d\n", int(sums["lifecyclesim_http_request_duration_seconds_count"]), int(sums["lifecyclesim_transitions_total"]))
	return nil
}
