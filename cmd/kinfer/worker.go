package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/kinfer/kinfer/host/remote"
)

// natsFlags declares the flags that reach a NATS server, shared by kinfer
// run and kinfer worker.
func natsFlags(fs *flag.FlagSet, c *remote.Config, urlDoc string) {
	fs.StringVar(&c.URL, "nats", "", urlDoc)
	fs.StringVar(&c.Creds, "nats-creds", "", "NATS credentials file (JWT and nkey seed) to connect with")
	fs.StringVar(&c.NKey, "nats-nkey", "", "NATS nkey seed file to connect with")
	fs.StringVar(&c.TLSCA, "nats-tls-ca", "", "CA certificates to verify the NATS server's TLS certificate with")
	fs.StringVar(&c.TLSCert, "nats-tls-cert", "", "client TLS certificate (when the server verifies clients)")
	fs.StringVar(&c.TLSKey, "nats-tls-key", "", "client TLS key")
	fs.DurationVar(&c.AckWait, "ack-wait", remote.DefaultAckWait, "a chunk whose worker shows no sign of life for this long goes to another worker (give run and workers the same value)")
	fs.IntVar(&c.MaxDeliver, "max-deliver", remote.DefaultMaxDeliver, "deliveries of a chunk without a result before the run reports it and stops (give run and workers the same value)")
}

// checkNATSFlags refuses delivery settings the server or the worker's
// keep-alive cannot honour.
func checkNATSFlags(c remote.Config) error {
	if c.AckWait < 100*time.Millisecond {
		return usageError{fmt.Errorf("--ack-wait must be at least 100ms (a worker says it is alive every third of it)")}
	}
	if c.MaxDeliver < 1 {
		return usageError{fmt.Errorf("--max-deliver must be ≥ 1")}
	}
	return nil
}

func cmdWorker(args []string, stdout, stderr io.Writer) error {
	var c remote.Config
	var o remote.WorkerOptions
	var verbose bool
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	natsFlags(fs, &c, "the NATS server (with JetStream) to take chunks from, e.g. nats://host:4222 (required)")
	fs.IntVar(&o.Slots, "workers", runtime.NumCPU(), "chunks evaluated at once")
	fs.StringVar(&o.CacheDir, "cache", "", "directory of fetched studies, data and plugins (by sha256) and compiled modules; a relative one is made absolute at start (default: the user cache directory, kinfer/worker)")
	fs.StringVar(&o.ID, "id", "", "the worker's name on the run's progress line (default host:pid)")
	fs.BoolVar(&o.TrustPlugins, "trust-plugins", false, "let a run's study lift the sandbox's limits of a plugin it marks trusted = true (no timeout or fuel budget, more memory); without it the worker declines such runs (their chunks go to other workers)")
	fs.Int64Var(&o.MaxFileBytes, "max-file-bytes", remote.DefaultMaxFileBytes, "decline runs with a file (study, dataset, plugin) larger than this many bytes (their chunks go to other workers)")
	fs.BoolVar(&verbose, "verbose", false, "show plugin log lines")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if c.URL == "" {
		return usageError{fmt.Errorf("--nats URL is required")}
	}
	if err := checkNATSFlags(c); err != nil {
		return err
	}
	if o.MaxFileBytes < 1 {
		return usageError{fmt.Errorf("--max-file-bytes must be ≥ 1")}
	}
	if err := checkWorkers(o.Slots); err != nil {
		return err
	}
	o.Log = stderr
	o.Runtime.CacheDir = os.Getenv("KINFER_CACHE_DIR") // as kinfer run's; "" → under --cache
	if verbose {
		o.Runtime.Log = stderr
	}
	ctx, stop := interruptible(stderr, "stopping (the chunks in hand go back to the queue)")
	defer stop()
	start := time.Now()
	err := remote.Work(ctx, c, o)
	if ctx.Err() != nil && err == nil {
		fmt.Fprintf(stderr, "kinfer worker: stopped after %s\n", time.Since(start).Round(time.Second))
	}
	return err
}
