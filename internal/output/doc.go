// Package output is the one output transaction of every command that
// writes: the destination rules (destination.go: an output is never an
// input, never a symbolic link, and only an output of this tool is ever
// replaced; one writer at a time under a lock), the staging directory an
// output is built in beside its destination (staging.go), the atomic move
// into place, a new destination by rename without replacement and an
// existing one by exchange (renameat2 RENAME_EXCHANGE, rename_*.go), and
// the durable writes of single files outside a staging directory with the
// directory fsync they need (file.go).
//
// Shards and merged datasets (shard, merge), campaign directories, attempt
// records and campaign pages (batch), and pages written on their own
// (report) all go through it; no other package renames into place. The
// fsync itself is internal/fsync's, which the journal writer shares.
//
//	st, err := output.Stage(dest, output.StageOptions{Replace: replace, Kind: output.KindShard, Inputs: inputs})
//	defer st.Abort()          // no-op after Commit
//	... write everything under st.Dir() ...
//	err = st.Commit()         // fsync the tree, rename or exchange, fsync the parent
//
//	err = output.WriteFileBytes(path, 0o644, data) // one file, whole or not at all
package output
