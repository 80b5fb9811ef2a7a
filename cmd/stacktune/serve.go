package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/stacktune/stacktune/serve"
)

type serveOptions struct {
	listen   string
	tokenEnv string
	history  string
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Local web UI and JSON API over every recorded run: list, open, compare, follow a tune live",
		Long: `serve opens the history's run ledger in a browser: the runs (filter by label, commit,
scenario) with their score transitions, a run's endpoints, query classes, per-request SQL,
findings and flame graph, any two runs compared (the largest change first, whether they may
be compared, and the interleaved decision when both came from one tune or ab), and a running
tune's page updating live. The same data is JSON under /api/ (see docs/serve.md). Nothing is
loaded from the network.

It listens on 127.0.0.1 by default. Any other address needs a token, read from the
environment variable named by --token-env (never from the command line).`,
		Example: `  stacktune serve                          # http://127.0.0.1:8737/
  STACKTUNE_SERVE_TOKEN=$(openssl rand -hex 16) stacktune serve --listen 0.0.0.0:8737`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, o, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", serve.DefaultListen, "address to listen on (host:port); not loopback needs a token")
	f.StringVar(&o.tokenEnv, "token-env", "STACKTUNE_SERVE_TOKEN", "environment variable holding the token every request must carry")
	f.StringVar(&o.history, "history", "", "history database (default $STACKTUNE_HISTORY or ~/.local/share/stacktune/history.db)")
	return cmd
}

func runServe(cmd *cobra.Command, o serveOptions, stderr io.Writer) error {
	opt := serve.Options{Listen: o.listen, Token: os.Getenv(o.tokenEnv)}
	if err := serve.CheckListen(opt.Listen, opt.Token); err != nil {
		return fmt.Errorf("%w: set %s to a token (it is read from the environment, never the command line)", err, o.tokenEnv)
	}
	store, err := openHistory(o.history)
	if err != nil {
		return err
	}
	defer store.Close()
	return serve.Serve(cmd.Context(), store, opt, func(addr string) {
		fmt.Fprintf(stderr, "stacktune serve: http://%s/ (history %s)\n", addr, store.Path())
	})
}
