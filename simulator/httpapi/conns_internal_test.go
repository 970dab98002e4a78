package httpapi

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// At the cap, making room closes an idle connection, or a pending one that has sent nothing
// through its grace, never one in its grace: the server may have read its request from the
// socket (nothing left to peek at) and not parsed it yet.
func TestConnsMakeRoomSparesTheGraced(t *testing.T) {
	tests := []struct {
		name  string
		state http.ConnState
		age   time.Duration // how long ago it connected
		want  bool          // closed
	}{
		{"idle", http.StateIdle, 0, true},
		{"pending in its grace", http.StateNew, -time.Minute, false}, // in it however late makeRoom runs
		{"pending past its grace", http.StateNew, 2 * PendingGrace, true},
		{"serving", http.StateActive, 2 * PendingGrace, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewConns(ConnLimits{MaxConns: 1})
			server, client := net.Pipe() // not a socket: sending peeks nothing
			defer client.Close()
			g.ConnState(server, http.StateNew)
			g.mu.Lock()
			g.byConn[server].since = time.Now().Add(-tt.age)
			g.mu.Unlock()
			if tt.state != http.StateNew {
				g.ConnState(server, tt.state)
			}
			if got := g.makeRoom(); got != tt.want {
				t.Errorf("makeRoom() = %v, want %v", got, tt.want)
			}
		})
	}
}
