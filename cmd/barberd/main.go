// Command barberd is the booking integration service for barbershops: REST
// v1 for chatbots and CRMs, GraphQL for dashboards, over SQLite or
// PostgreSQL. Run "barberd help" for its subcommands.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
	_ "time/tzdata" // unit time zones must resolve even where the system has no zone database

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"barberd/demo"
	"barberd/graph"
	"barberd/graph/domain"
	"barberd/graph/slots"
	"barberd/graph/store"
	"barberd/mcpserver"
)

const usage = `barberd: booking integration service for barbershops

Usage:
  barberd demo [--addr :8080]       migrate, seed a demo account if there is none, print a key, serve
  barberd serve [--addr :8080]      run the server (applies pending migrations first
                                    unless --migrate=false)
  barberd migrate                   apply the pending schema migrations; print each
  barberd account create --name NAME
                                    create an account; print its id and an admin key as one JSON line
  barberd account list              list the accounts: id, created, name
  barberd seed-demo                 create a new demo account; print its keys as one JSON line
  barberd apikey create --account ID --name NAME --scopes a,b,c [--max-holds N]
                                    create an API key; print the key alone
  barberd mcp                       serve MCP tools over stdin/stdout as the key
                                    in BARBERD_API_KEY (for desktop LLM agents)
  barberd version                   print the version (also --version)

Every subcommand takes --database-url (or DATABASE_URL): postgres://... for
PostgreSQL, sqlite:PATH for an SQLite file; default sqlite:barberd.db.
Run "barberd COMMAND --help" for a command's settings and environment
variables ("barberd serve --help" for every server setting).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "version" || args[0] == "--version" || args[0] == "-version" {
		fmt.Fprintln(stdout, version())
		return 0
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		err = serveCmd(ctx, rest, stdout, stderr, false)
	case "demo":
		err = serveCmd(ctx, rest, stdout, stderr, true)
	case "migrate":
		err = migrateCmd(ctx, rest, stdout, stderr)
	case "seed-demo":
		err = seedDemoCmd(ctx, rest, stdout, stderr)
	case "mcp":
		err = mcpCmd(ctx, rest, os.Stdin, stdout, stderr)
	case "apikey":
		if len(rest) == 0 || rest[0] != "create" {
			fmt.Fprint(stderr, "usage: barberd apikey create --account ID --name NAME --scopes a,b,c [--max-holds N]\n")
			return 2
		}
		err = apikeyCreateCmd(ctx, rest[1:], stdout, stderr)
	case "account":
		switch {
		case len(rest) > 0 && rest[0] == "create":
			err = accountCreateCmd(ctx, rest[1:], stdout, stderr)
		case len(rest) > 0 && rest[0] == "list":
			err = accountListCmd(ctx, rest[1:], stdout, stderr)
		default:
			fmt.Fprint(stderr, "usage: barberd account create --name NAME | barberd account list\n")
			return 2
		}
	default:
		fmt.Fprintf(stderr, "barberd: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "barberd %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// dbFlags are the flags every database subcommand has.
type dbFlags struct {
	url       string
	logLevel  string
	checkOnly bool              // check the schema's version, apply no migration (serve --migrate=false)
	applied   []store.Migration // the migrations open applied
}

// newFlagSet makes the flag set of subcommand name; its --help prints
// synopsis and about, the flags, and the environment variables it reads
// (those named in its flags' usage, and extraEnv).
func newFlagSet(name, synopsis, about string, stderr io.Writer, extraEnv ...string) (*flag.FlagSet, *dbFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(fs, synopsis, about, extraEnv) }
	f := &dbFlags{}
	fs.StringVar(&f.url, "database-url", envOr("DATABASE_URL", store.DefaultURL),
		"database: postgres://... or sqlite:PATH (env DATABASE_URL)")
	fs.StringVar(&f.logLevel, "log-level", envOr("BARBERD_LOG_LEVEL", "info"),
		"log level: debug, info, warn, error (env BARBERD_LOG_LEVEL)")
	return fs, f
}

var envInUsage = regexp.MustCompile(`\(env ([A-Z0-9_]+)\)`)

func printUsage(fs *flag.FlagSet, synopsis, about string, extraEnv []string) {
	w := fs.Output()
	fmt.Fprintf(w, "Usage: barberd %s\n\n%s\n\nFlags:\n", synopsis, strings.TrimSpace(about))
	fs.PrintDefaults()
	env := extraEnv
	fs.VisitAll(func(f *flag.Flag) {
		for _, m := range envInUsage.FindAllStringSubmatch(f.Usage, -1) {
			env = append(env, m[1]+"\t(--"+f.Name+")")
		}
	})
	fmt.Fprintf(w, "\nEnvironment variables:\n")
	for _, e := range env {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// open opens the database and applies its pending migrations (or checks
// there are none), and returns it with the log.
func (f *dbFlags) open(ctx context.Context, stderr io.Writer) (*slog.Logger, *store.DB, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	db, err := store.Open(f.url)
	if err != nil {
		return nil, nil, err
	}
	// Errors name the database (its password hidden): an SQLite file that
	// cannot be opened says which one.
	// A replica starting while another migrates an SQLite file may find it
	// busy while its connection sets the file's modes: it tries again.
	err = db.Ping(ctx)
	for attempt := 1; err != nil && store.Classify(err) == store.Retry && attempt < 20; attempt++ {
		select {
		case <-time.After(500 * time.Millisecond):
			err = db.Ping(ctx)
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("database %s: %w", store.Redact(f.url), err)
	}
	if err := f.migrateSchema(ctx, db, log); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("database %s: %w", store.Redact(f.url), err)
	}
	return log, db, nil
}

// parseAndOpen parses a subcommand's flags, then opens and migrates the
// database they name.
func (f *dbFlags) parseAndOpen(ctx context.Context, fs *flag.FlagSet, args []string, stderr io.Writer) (*graph.Resolver, *store.DB, error) {
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	log, db, err := f.open(ctx, stderr)
	if err != nil {
		return nil, nil, err
	}
	return graph.New(graph.Settings{DB: db, Log: log}), db, nil
}

func seedDemoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newFlagSet("seed-demo", "seed-demo [flags]",
		`Creates a new demo account (two shops with barbers, services and hours) and prints
{"account_id","api_key","admin_api_key"} as one JSON line: a booking key and an admin key.`, stderr)
	res, db, err := f.parseAndOpen(ctx, fs, args, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	keys, err := demo.Seed(ctx, res)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(keys)
}

func apikeyCreateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newFlagSet("apikey create", "apikey create --account ID --name NAME [--scopes a,b,c]",
		"Creates an API key of an account and prints its secret alone: barberd keeps only a hash, so it is shown only once.", stderr)
	account := fs.String("account", "", "account id (required)")
	name := fs.String("name", "", "a name telling what the key is for (required)")
	scopes := fs.String("scopes", strings.Join(domain.BookingScopes, ","), "comma-separated scopes: "+strings.Join(domain.AllScopes, ", "))
	maxHolds := fs.Int("max-holds", -1, "most holds the key may have active at once; 0: no cap; left out: the server's --max-holds-per-key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *account == "" || *name == "" {
		return errors.New("--account and --name are required")
	}
	log, db, err := f.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	res := graph.New(graph.Settings{DB: db, Log: log})
	var list []string
	for _, s := range strings.Split(*scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	var most *int
	if *maxHolds != -1 {
		most = maxHolds
	}
	secret, _, err := res.CreateAPIKeyWithCap(ctx, *account, *name, list, most)
	if err != nil {
		return describe(err)
	}
	_, err = fmt.Fprintln(stdout, secret)
	return err
}

// mcpCmd serves the MCP tools over stdio (in and out carry the protocol,
// so logs go to stderr alone) as the key in BARBERD_API_KEY, until the
// client closes in.
func mcpCmd(ctx context.Context, args []string, in io.Reader, out, stderr io.Writer) error {
	fs, f := newFlagSet("mcp", "mcp [flags]",
		`Serves barberd's MCP tools over stdin and stdout, for desktop LLM agents that start it,
acting as the API key in BARBERD_API_KEY (required). Logs go to stderr.`, stderr,
		"BARBERD_API_KEY\t(required) the API key the tools act as")
	res, db, err := f.parseAndOpen(ctx, fs, args, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	secret := os.Getenv("BARBERD_API_KEY")
	if secret == "" {
		return errors.New("set BARBERD_API_KEY to the API key the tools act as")
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err = mcpserver.New(res).Stdio(ctx, t, secret, res.Settings().Log)
	if code := domain.ErrorCode(err); code == domain.CodeInvalidAPIKey || code == domain.CodeMissingAPIKey {
		return fmt.Errorf("BARBERD_API_KEY: %w", describe(err))
	}
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client went away, or we were told to stop
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// describe turns a domain error into a message for a person at a terminal.
func describe(err error) error {
	if e := domain.DomainError(err); e.Code != domain.CodeInternal {
		msg := e.Message
		for _, f := range e.Fields {
			msg += fmt.Sprintf("\n  %s: %s", f.Field, f.Message)
		}
		return errors.New(msg)
	}
	return err
}

func accountCreateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newFlagSet("account create", "account create --name NAME [flags]",
		`Creates an account (a shop or a chain of shops) and a first API key with every scope, for its
dashboard, and prints {"account_id","admin_api_key"} as one JSON line. The key is shown only
this once; make booking keys for chatbots with it (GraphQL createApiKey) or with apikey create.`, stderr)
	name := fs.String("name", "", "the account's name, which GET /context tells chatbots (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" {
		return errors.New("--name is required")
	}
	log, db, err := f.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	acc, secret, err := graph.New(graph.Settings{DB: db, Log: log}).CreateAccount(ctx, *name)
	if err != nil {
		return describe(err)
	}
	return json.NewEncoder(stdout).Encode(map[string]string{"account_id": acc.ID, "admin_api_key": secret})
}

func accountListCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, f := newFlagSet("account list", "account list [flags]",
		"Lists every account, oldest first, one a line: id, creation time (UTC), name, separated by tabs.", stderr)
	res, db, err := f.parseAndOpen(ctx, fs, args, stderr)
	if err != nil {
		return err
	}
	defer db.Close()
	accs, err := res.Accounts(ctx)
	if err != nil {
		return err
	}
	for _, a := range accs {
		if _, err := fmt.Fprintf(stdout, "%s\t%s\t%s\n", a.ID, slots.UTC(a.CreatedAt), a.Name); err != nil {
			return err
		}
	}
	return nil
}

// version is the module version and the commit barberd was built from, as
// the Go toolchain recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "barberd (no build information)"
	}
	v := "barberd " + info.Main.Version
	var rev, at, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " (modified)"
			}
		}
	}
	if rev != "" {
		v += " commit " + rev + dirty
		if at != "" {
			v += " " + at
		}
	}
	return v + " " + info.GoVersion
}
