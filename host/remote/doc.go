// Package remote evaluates a run's batches on worker processes, on this
// machine or others, through a NATS server with JetStream (nats.io): the
// run (`kinfer run --nats URL`) cuts each ask/tell batch into chunks whose
// boundaries depend on the batch alone (chunkPoints), publishes them to a
// work-queue stream, and puts the results back in chunk order; workers
// (`kinfer worker --nats URL`) pull chunks and evaluate them with the same
// code as a local run (host/target's Evaluate, the study loaded by
// host/study with the same sandbox limits), so samples.csv is byte-identical
// to a local run's whatever the number of workers (the determinism
// contract). Every method, built-in or plugin, gets it through
// target.Remote without a change.
//
// Content: the study file, its datasets, init file, plugin manifests and
// modules are shipped in a JetStream object store, each object named by
// the sha256 of its content, and described by a bundle (bundle.go) whose
// own sha256 every chunk names. A worker verifies every digest, checks
// that the study names only files the bundle pins (checkRefs, before
// anything is loaded; checkPinned after), caches the files and compiled
// modules. It refuses a chunk whose content is wrong (body, width, a
// malformed bundle): the run stops with the worker's reason. It declines
// a chunk for reasons of its own (version, limits, --trust-plugins, its
// cache): it stores a notice, takes the chunk off the queue and pauses,
// and the run publishes the chunk again for another worker; the run stops
// only when chunks keep being declined and no worker answers.
//
// Faults: a chunk is acknowledged only after its result is stored; a
// worker that dies or goes silent for Config.AckWait loses its chunk to
// another worker (a busy worker signals progress every AckWait/3);
// duplicate results are ignored; a chunk delivered Config.MaxDeliver
// times without a result is reported to the run (the server's
// MAX_DELIVERIES advisory) and the run stops instead of waiting for ever.
// Chunks and results are stored on disk by the server (file storage), so
// a server restart loses nothing; both sides reconnect.
package remote
