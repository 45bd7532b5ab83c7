// Package shard writes one LeRobot v3.0 dataset ("shard") from plain inputs:
// feature descriptions, columnar episode rows, task strings, video segment
// pointers with their image statistics, and the CERES provenance of every
// episode. It knows nothing of journals, plans or video decoding; the export
// command connects those to it. Every path it writes is internal/layout's;
// the output transaction (staging, commit) is internal/output's.
//
// # Use
//
//	st, err := output.Stage(dest, output.StageOptions{Replace: reexport, Inputs: []string{session}})
//	defer st.Abort()                       // no-op after Commit
//	prev, _ := shard.OpenPrevious(dest)    // nil on a first export; videos to reuse
//	b, err := shard.NewBuilder(st.Dir(), features, shard.Options{FPS: 30, RobotType: "so100"})
//	rows := b.NewRows(maxFrames)
//	for each episode {
//		fill rows.Columns[i] row-major (shard.Values), set rows.Len
//		err = b.WriteEpisode(shard.EpisodeMeta{Task: ..., Videos: ..., Ceres: ...}, rows)
//	}
//	err = b.WriteSpec(hash, canonical)     // once per specification (applied and recorded)
//	err = b.Finish(report)
//	err = st.Commit()
//
// Video files are written by the video package into st.Dir()/videos/...; the
// Builder only records their chunk/file indices and timestamps.
//
// # Layout written
//
// The files are internal/layout's (its doc lists them all); the Builder
// writes
//
//	layout.DataPath(c, f)        one row per frame, one row group per episode
//	layout.InfoPath              LeRobot's DatasetInfo (indent 4, no \u escapes)
//	layout.StatsPath             aggregated statistics per feature
//	layout.TasksPath             task_index + task (pandas index "task")
//	layout.EpisodesPath(0, 0)    one row per episode, LeRobot's columns then layout.EpisodeColumns
//	                             (after Continue: the new episodes' rows, in the file after the
//	                             continued dataset's last, whose files are linked)
//	layout.SpecPath(hash)        canonical specification bytes (WriteSpec)
//	layout.CardPath              the dataset card (WriteCard)
//	layout.ExportReportPath      the caller's report (indent 2, trailing newline)
//
// and any other file of layout.CeresFiles its caller hands it
// (WriteCeresJSON, WriteCeresFile); a path the layout does not name is
// refused. Video files are the video package's; the Builder records their
// chunk/file indices.
//
// # Data files
//
// Columns are the caller's non-video features in order, then LeRobot's
// defaults timestamp (float32 = frame_index/fps), frame_index, episode_index,
// index (global, gap-free), task_index (int64). A shape [1] feature is a
// scalar column; shape [n] is Arrow fixed_size_list<item: T>[n], stored as a
// REQUIRED 3-level Parquet LIST with REQUIRED elements. Files are written
// with parquet-go: snappy, v1 data pages, a fixed created_by, the
// "huggingface" key (datasets' {"info": {"features": ...}}, without the
// per-object "fingerprint" datasets adds) and "ARROW:schema" (an Arrow IPC
// schema message, base64, as Arrow's Parquet writers store it) so that
// pyarrow and arrow-go read vectors back as fixed_size_list. Arrow readers
// match ARROW:schema to the Parquet columns by position, so every finished
// file is read back and checked (rows, row groups, names and types by
// position) before it counts as written.
//
// A new data file starts by LeRobot's rule: before an episode, when
// size + size/frames_in_file * episode_frames >= data_files_size_in_mb; the
// indices then step with update_chunk_file_indices (chunks_size files per
// chunk). An episode is never split, and only one episode's rows are held.
// The columns of an episode are converted and encoded on Options.Workers
// goroutines; the bytes do not depend on the number of workers.
//
// # Statistics
//
// For every non-string feature and the five default columns, per episode,
// as lerobot 0.4.4's compute_episode_stats / RunningQuantileStats on the
// whole episode:
//
//	min, max, mean, std (population), count = frames
//	edges = linspace(min-1e-10, max+1e-10, 5001); hist = np.histogram(x, edges)
//	q(p): first bin i with cumsum[i] >= p*N; i == 0 -> edges[0];
//	      empty bin -> edges[i]; else linear interpolation inside bin i
//	N < 2: std = 0 and q01..q99 = mean
//
// The shard computes in float64 (LeRobot accumulates float32 features in
// float32 and uses E[x^2]-E[x]^2, and squares uint8 in uint8, which
// overflows); results agree with LeRobot's to float32 rounding, quantiles to
// within a histogram bin (TestMatchesLeRobotReference compares with
// LeRobot's own output). Timestamp statistics are computed on k/fps in
// float64, as LeRobot's episode buffer holds them. min and max keep the
// feature's type in JSON and Parquet (ints, bools). Video statistics are
// computed by the video package and passed in per episode ((3,1,1) per
// channel in JSON).
//
// stats.json aggregates the episodes pairwise in order, as LeRobot does when
// saving each episode: min of mins, max of maxes, count-weighted mean, pooled
// variance, summed counts, and quantiles by Options.QuantileAggregation
// (default: lerobot 0.4.4's count-weighted mean; QuantileEnvelope: newer
// LeRobot's min for q<=50, max above). NaN or Inf never reach JSON: the
// writer rejects them. A feature never has zero samples (an episode has at
// least one frame), and a shard without episodes is refused by Finish
// (ErrNoEpisodes), since LeRobot cannot load it.
//
// # Metadata files
//
// meta/info.json and meta/stats.json are byte-identical to what LeRobot's
// write_json (json.dump indent=4, ensure_ascii=False) writes for the same
// content: key order as create_empty_dataset_info, Python float repr, one
// list element per line, no trailing newline. meta/tasks.parquet and the
// episodes file are written with arrow-go like pyarrow writes
// pa.Table.from_pydict output: nullable columns, list<item: T>, snappy,
// dictionary encoding in the tasks file (the episodes file goes without:
// its statistics are distinct floats). The episodes file has every column LeRobot writes, in
// its order (episode_index, tasks, length, data/*, dataset_from/to_index,
// videos/<key>/*, stats/<feature>/<stat>, meta/episodes/*), then
// layout.EpisodeColumns (the Merged ones only with Options.SourceColumns);
// a Null column is null where its value is nil.
//
// # Atomic replacement
//
// A shard is built in an output.Staging and moved into place by its Commit
// (internal/output: the destination rules, the lock, the exchange); the
// Builder's files are fsynced as they are written, and Commit syncs the
// directories.
//
// # Determinism
//
// The same inputs give byte-identical files: no timestamps, no randomness,
// a fixed created_by (Options.CreatedBy), sorted map keys in JSON.
package shard
