package store

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestSocketBegin plays the server against a socket whose transaction
// begins, to check what PostgreSQL is not made to do in TestBeginRides:
// messages the server may send unasked among BEGIN's answers, BEGIN
// refused, and answers that make no sense.
func TestSocketBegin(t *testing.T) {
	beginQuery := message(nil, msgQuery, cstring("BEGIN READ WRITE"))
	// A prepared statement's run: Bind, Execute, Sync.
	stmt := message(message(message(nil, msgBind, []byte{0, 's', '1', 0, 0, 0, 0, 0, 0, 0}), msgExecute, []byte{0, 0, 0, 0, 0}), 'S')
	ran := append(append(message(nil, msgBindComplete), message(nil, msgCommandComplete, cstring("INSERT 0 1"))...),
		message(nil, msgReadyForQuery, []byte{'T'})...)
	notice := message(nil, msgNotice, []byte("SNOTICE\x00\x00"))
	param := message(nil, msgParameterStatus, cstring("TimeZone"), cstring("UTC"))
	refused := append(message(nil, msgError, []byte("SERROR\x00C25006\x00Mcannot set transaction read-write mode during recovery\x00\x00")),
		message(nil, msgReadyForQuery, []byte{'I'})...)
	var begunExt []byte
	for _, m := range begunExtended {
		begunExt = append(begunExt, m...)
	}

	// begin returns a socket on one end of a pipe, its BEGIN kept, and the
	// server's end.
	begin := func(t *testing.T) (*socket, net.Conn) {
		t.Helper()
		client, server := net.Pipe()
		t.Cleanup(func() { client.Close(); server.Close() })
		_ = server.SetDeadline(time.Now().Add(5 * time.Second))
		_ = client.SetDeadline(time.Now().Add(5 * time.Second))
		s := &socket{Conn: client, beginning: true}
		if n, err := s.Write(beginQuery); n != len(beginQuery) || err != nil {
			t.Fatalf("BEGIN written: %d, %v", n, err)
		}
		got := make([]byte, len(begun))
		if _, err := io.ReadFull(s, got); err != nil || !bytes.Equal(got, begun) {
			t.Fatalf("BEGIN's answer %q, %v; want %q", got, err, begun)
		}
		if s.writes.Load() != 0 {
			t.Fatal("BEGIN was written")
		}
		return s, server
	}
	// serve plays the server on its end of the pipe: for each pair, it
	// reads the first and writes the second. The channel closes when it
	// is done.
	serve := func(t *testing.T, server net.Conn, pairs ...[]byte) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < len(pairs); i += 2 {
				got := make([]byte, len(pairs[i]))
				if _, err := io.ReadFull(server, got); err != nil {
					t.Errorf("the server read: %v", err)
					return
				}
				if !bytes.Equal(got, pairs[i]) {
					t.Errorf("the server read %q, want %q", got, pairs[i])
					return
				}
				if len(pairs[i+1]) == 0 {
					continue
				}
				if _, err := server.Write(pairs[i+1]); err != nil {
					t.Errorf("the server wrote: %v", err)
					return
				}
			}
		}()
		return done
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

	cases := []struct {
		name         string
		answer, want []byte // the server's, and what lib/pq reads
	}{
		{"ran", cat(begunExt, ran), ran},
		{"unasked messages kept", cat(param, begunExt[:5], notice, begunExt[5:], ran), cat(param, notice, ran)},
		// The server skipped the statement: lib/pq reads BEGIN's error as
		// its, and the connection idle.
		{"refused", refused, refused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, server := begin(t)
			done := serve(t, server, cat(extendedBegin(nil, []byte("BEGIN READ WRITE")), stmt), c.answer)
			if n, err := s.Write(stmt); n != len(stmt) || err != nil {
				t.Fatalf("statement written: %d, %v", n, err)
			}
			got := make([]byte, len(c.want))
			if _, err := io.ReadFull(s, got); err != nil || !bytes.Equal(got, c.want) {
				t.Errorf("read %q, %v; want %q", got, err, c.want)
			}
			<-done
			if n := s.writes.Load(); n != 1 {
				t.Errorf("%d writes, want 1", n)
			}
		})
	}

	t.Run("nonsense", func(t *testing.T) {
		s, server := begin(t)
		done := serve(t, server, cat(extendedBegin(nil, []byte("BEGIN READ WRITE")), stmt), ran)
		if _, err := s.Write(stmt); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(make([]byte, 64)); !errors.Is(err, errProtocol) {
			t.Errorf("read %v, want errProtocol", err)
		}
		<-done
		if _, err := server.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("the connection is open (%v)", err)
		}
	})

	for _, end := range []string{"COMMIT", "ROLLBACK"} {
		t.Run("empty "+end, func(t *testing.T) {
			s, _ := begin(t)
			q := message(nil, msgQuery, cstring(end))
			if n, err := s.Write(q); n != len(q) || err != nil {
				t.Fatalf("%s written: %d, %v", end, n, err)
			}
			want := answer(end, 'I')
			got := make([]byte, len(want))
			if _, err := io.ReadFull(s, got); err != nil || !bytes.Equal(got, want) {
				t.Errorf("read %q, %v; want %q", got, err, want)
			}
			if n := s.writes.Load(); n != 0 {
				t.Errorf("%d writes, want 0", n)
			}
		})
	}

	t.Run("terminate", func(t *testing.T) {
		s, server := begin(t)
		terminate := message(nil, msgTerminate)
		done := serve(t, server, terminate, nil)
		if n, err := s.Write(terminate); n != len(terminate) || err != nil {
			t.Fatalf("Terminate written: %d, %v", n, err)
		}
		<-done
	})

	t.Run("simple query", func(t *testing.T) {
		s, server := begin(t)
		q := message(nil, msgQuery, cstring("SELECT 1"))
		queryAnswer := answer("SELECT 1", 'T')
		done := serve(t, server, beginQuery, cat(notice, begun), q, queryAnswer)
		if n, err := s.Write(q); n != len(q) || err != nil {
			t.Fatalf("query written: %d, %v", n, err)
		}
		want := cat(notice, queryAnswer)
		got := make([]byte, len(want))
		if _, err := io.ReadFull(s, got); err != nil || !bytes.Equal(got, want) {
			t.Errorf("read %q, %v; want %q", got, err, want)
		}
		if n := s.writes.Load(); n != 2 {
			t.Errorf("%d writes, want 2 (BEGIN alone, then the query)", n)
		}
		<-done
	})

	t.Run("simple query, BEGIN refused", func(t *testing.T) {
		s, server := begin(t)
		done := serve(t, server, beginQuery, refused)
		if _, err := s.Write(message(nil, msgQuery, cstring("SELECT 1"))); !errors.Is(err, errBeginRefused) {
			t.Errorf("the query after BEGIN failed: %v, want errBeginRefused", err)
		}
		<-done
		if _, err := server.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("the connection is open (%v)", err)
		}
	})
}
