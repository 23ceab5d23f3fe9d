// Command barberbench measures barberd under load. "seed" builds a realistic
// dataset with direct bulk inserts; "run" drives a running server over HTTP
// with concurrent simulated chatbots and reports each endpoint against floors
// measured in the same run (an empty HTTP round trip, and the bare database
// write of a booking), since absolute numbers on a shared machine mean little.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // unit time zones must resolve where the system has no zone database
)

const usage = `barberbench: load generator for barberd

Usage:
  barberbench seed --database-url URL [--units 2] [--barbers-per-unit 12]
                   [--appointments 10000] [--days 365] [--future-days 14]
      migrate, then bulk-insert one account with its units, barbers, hours,
      services, customers and appointment history; print one JSON line with
      the account id, a booking API key and the unit ids

  barberbench run --url http://127.0.0.1:8080 --key KEY [--concurrency 16]
                  [--duration 30s] [--scenario flow|availability|range|next|create|hotslot|waitlist]
                  [--database-url URL] [--json FILE] [--pid PID] [--waitlist 1000]
      drive a running barberd (loopback only) and report throughput and
      latency per endpoint, with the floors measured in the same run

  barberbench receive [--addr 127.0.0.1:0]
      serve a webhook receiver and print its URL, for run --webhook
      --webhook-receiver URL: the receiver then has a process of its own

Run "barberbench seed --help" or "barberbench run --help" for every flag.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(cli(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// cli runs one subcommand and returns the process exit code.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "seed":
		err = seedCmd(ctx, rest, stdout, stderr)
	case "run":
		err = runCmd(ctx, rest, stdout, stderr)
	case "receive":
		err = receiveCmd(ctx, rest, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "barberbench: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "barberbench %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}
