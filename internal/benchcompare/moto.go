package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/internal/freeport"
)

// motoHeader makes moto answer as EC2: it routes on the service named in a SigV4-shaped
// Authorization header (without one it answers as S3) and checks no signature.
var motoHeader = http.Header{
	"Content-Type":  {"application/x-www-form-urlencoded"},
	"Authorization": {"AWS4-HMAC-SHA256 Credential=AKIDBENCH/20240101/us-east-1/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=0"},
}

// motoAMI is one of the AMIs moto ships.
const motoAMI = "ami-12c6146b"

var instanceIDRe = regexp.MustCompile(`<instanceId>(i-[0-9a-f]+)</instanceId>`)

// motoSystem is moto_server's EC2 query API under the same load: each client owns a pool of
// instances. moto's instances have no lifecycle: Stop and Start take effect at once.
type motoSystem struct {
	pooled
	base    string
	hc      *http.Client
	stopped [][]bool
}

func (m *motoSystem) Name() string { return "moto" }

// Ops says what each operation sends.
func (m *motoSystem) Ops() map[string]string {
	return map[string]string{
		"get":    "EC2 DescribeInstances with InstanceId.1, round robin over the client's pool",
		"act":    "EC2 StopInstances / StartInstances (InstanceId.1), alternating per instance",
		"create": "EC2 RunInstances of one instance (MinCount=MaxCount=1)",
	}
}

func (m *motoSystem) call(ctx context.Context, params string, keep bool) (int, []byte, error) {
	return send(ctx, m.hc, http.MethodPost, m.base+"/", motoHeader, []byte("Version=2016-11-15&"+params), keep)
}

// Prepare runs pool instances for each client (one RunInstances each).
func (m *motoSystem) Prepare(ctx context.Context, clients, pool int) error {
	m.pools = make([][]string, clients)
	m.stopped = make([][]bool, clients)
	return parallel(ctx, clients, 4, func(ctx context.Context, c int) error {
		n := strconv.Itoa(pool)
		status, b, err := m.call(ctx, "Action=RunInstances&ImageId="+motoAMI+"&InstanceType=t2.micro&MinCount="+n+"&MaxCount="+n, true)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return statusError("moto RunInstances", status, b)
		}
		for _, sm := range instanceIDRe.FindAllSubmatch(b, -1) {
			m.pools[c] = append(m.pools[c], string(sm[1]))
		}
		if len(m.pools[c]) != pool {
			return fmt.Errorf("moto RunInstances made %d instances, want %d", len(m.pools[c]), pool)
		}
		m.stopped[c] = make([]bool, pool)
		return nil
	})
}

// Request returns the request function of op.
func (m *motoSystem) Request(op string) requestFunc {
	switch op {
	case "get":
		return func(ctx context.Context, c, seq int) outcome {
			p := m.pools[c]
			status, _, err := m.call(ctx, "Action=DescribeInstances&InstanceId.1="+p[seq%len(p)], false)
			return classify(status, err, false)
		}
	case "act":
		return func(ctx context.Context, c, seq int) outcome {
			p, st := m.pools[c], m.stopped[c]
			i := seq % len(p)
			action := "StopInstances"
			if st[i] {
				action = "StartInstances"
			}
			status, _, err := m.call(ctx, "Action="+action+"&InstanceId.1="+p[i], false)
			if status == http.StatusOK {
				st[i] = !st[i]
			}
			return classify(status, err, true)
		}
	case "create":
		params := "Action=RunInstances&ImageId=" + motoAMI + "&InstanceType=t2.micro&MinCount=1&MaxCount=1"
		return func(ctx context.Context, _, _ int) outcome {
			status, _, err := m.call(ctx, params, false)
			if status == http.StatusOK {
				m.created.Add(1)
			}
			return classify(status, err, false)
		}
	}
	panic("unknown op " + op)
}

// startMoto starts moto_server on a free port and waits until its EC2 API answers.
func startMoto(ctx context.Context, cfg *config, logPath string) (*motoSystem, error) {
	port, err := freeport.Loopback()
	if err != nil {
		return nil, err
	}
	srv, err := startServer("moto_server", cfg.serverCPU, []string{cfg.moto, "-H", "127.0.0.1", "-p", strconv.Itoa(port)},
		"http://127.0.0.1:"+strconv.Itoa(port), logPath, cfg.pidFile)
	if err != nil {
		return nil, err
	}
	m := &motoSystem{pooled: pooled{srv: srv}, base: srv.base, hc: newHTTPClient()}
	err = srv.waitReady(ctx, 60*time.Second, func(ctx context.Context) error {
		status, b, err := m.call(ctx, "Action=DescribeInstances", true)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return statusError("moto DescribeInstances", status, b)
		}
		return nil
	})
	if err != nil {
		srv.stop()
		return nil, err
	}
	return m, nil
}
