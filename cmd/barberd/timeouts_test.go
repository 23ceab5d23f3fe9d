package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"barberd/graph/storetest"
)

// TestServerTimeouts: a client that stalls mid-request or idles on a
// keep-alive connection cannot hold it open past the configured timeouts.
func TestServerTimeouts(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t, "sqlite3")
	keys := seedDemo(t, dbURL)
	s := startServer(t, t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--database-url", dbURL,
		"--read-timeout", "1s", "--idle-timeout", "1s", "--jobs-interval", "0")
	addr := strings.TrimPrefix(s.URL, "http://")

	t.Run("body that never arrives", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, err = io.WriteString(conn, "POST /api/integrations/v1/appointments HTTP/1.1\r\nHost: x\r\n"+
			"X-Service-Api-Key: "+keys.APIKey+"\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"unit_id\":")
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Fatalf("stalled body answered %d, want a 4xx", resp.StatusCode)
			}
		}
		if waited := time.Since(began); waited > 5*time.Second {
			t.Fatalf("stalled request held the connection %s; read timeout is 1s", waited)
		}
	})

	t.Run("idle keep-alive connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		began := time.Now()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := br.ReadByte(); err != io.EOF {
			t.Fatalf("idle connection: read %v, want the server to close it (EOF)", err)
		}
		if waited := time.Since(began); waited > 5*time.Second {
			t.Fatalf("idle connection closed after %s; idle timeout is 1s", waited)
		}
	})
}
