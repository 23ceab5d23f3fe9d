package admit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"barberd/graph/admit"
)

func TestGate(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		g := admit.New(10, time.Minute, nil)
		a, err := g.Acquire(context.Background(), 6)
		if err != nil {
			t.Fatal(err)
		}
		b, err := g.Acquire(context.Background(), 4)
		if err != nil {
			t.Fatal(err)
		}
		admitted := make(chan struct{})
		go func() {
			c, err := g.Acquire(context.Background(), 100) // as heavy as the whole gate
			if err != nil {
				t.Error(err)
			}
			close(admitted)
			c()
		}()
		a()
		select {
		case <-admitted:
			t.Fatal("admitted while 4 of 10 were in use")
		case <-time.After(20 * time.Millisecond):
		}
		b()
		<-admitted
	})
	t.Run("ErrBusy", func(t *testing.T) {
		g := admit.New(1, 10*time.Millisecond, nil)
		release, _ := g.Acquire(context.Background(), 1)
		defer release()
		if _, err := g.Acquire(context.Background(), 1); !errors.Is(err, admit.ErrBusy) {
			t.Fatalf("got %v, want ErrBusy", err)
		}
	})
	t.Run("CallerLeaves", func(t *testing.T) {
		g := admit.New(2, time.Minute, nil)
		release, _ := g.Acquire(context.Background(), 2)
		ctx, cancel := context.WithCancel(context.Background())
		left := make(chan error)
		go func() {
			_, err := g.Acquire(ctx, 2)
			left <- err
		}()
		time.Sleep(10 * time.Millisecond)
		cancel()
		if err := <-left; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		release()
		next, err := g.Acquire(context.Background(), 2) // nobody left in the queue
		if err != nil {
			t.Fatal(err)
		}
		next()
	})
	t.Run("Hold", func(t *testing.T) {
		g := admit.New(1, 10*time.Millisecond, nil)
		var h admit.Hold
		ctx := admit.WithHold(context.Background(), &h)
		done, err := g.Acquire(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		done() // the hold keeps it
		if _, err := g.Acquire(context.Background(), 1); !errors.Is(err, admit.ErrBusy) {
			t.Fatalf("admitted while a hold kept the gate: %v", err)
		}
		again, err := g.Acquire(ctx, 1) // the same request: never waits for itself
		if err != nil {
			t.Fatal(err)
		}
		again()
		h.Release()
		other, err := g.Acquire(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		other()
	})
}
