package layout

import "testing"

// TestPaths checks that the path functions expand the templates info.json
// states.
func TestPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{DataPath(0, 7), "data/chunk-000/file-007.parquet"},
		{DataPath(1234, 5), "data/chunk-1234/file-005.parquet"},
		{VideoPath("observation.images.front", 2, 999), "videos/observation.images.front/chunk-002/file-999.mp4"},
		{EpisodesPath(0, 0), "meta/episodes/chunk-000/file-000.parquet"},
	} {
		if tc.got != tc.want {
			t.Errorf("path %q, want %q", tc.got, tc.want)
		}
	}
	// The templates, expanded the way Python's str.format does for these
	// fields, give the same paths.
	if got := pyFormat(DataPathTemplate, map[string]string{"chunk_index": "003", "file_index": "014"}); got != DataPath(3, 14) {
		t.Errorf("DataPathTemplate expands to %q, DataPath to %q", got, DataPath(3, 14))
	}
	if got := pyFormat(VideoPathTemplate, map[string]string{"video_key": "k", "chunk_index": "003", "file_index": "014"}); got != VideoPath("k", 3, 14) {
		t.Errorf("VideoPathTemplate expands to %q, VideoPath to %q", got, VideoPath("k", 3, 14))
	}
}

// pyFormat replaces each {name} or {name:03d} field of tmpl by vals[name].
func pyFormat(tmpl string, vals map[string]string) string {
	out := []byte{}
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' {
			out = append(out, tmpl[i])
			continue
		}
		j := i + 1
		for tmpl[j] != '}' {
			j++
		}
		name := tmpl[i+1 : j]
		for k := range name {
			if name[k] == ':' {
				name = name[:k]
				break
			}
		}
		out = append(out, vals[name]...)
		i = j
	}
	return string(out)
}

// TestCeresPaths pins the CERES paths: they are the format, and a
// dataset written before a change must still be read after it.
func TestCeresPaths(t *testing.T) {
	t.Parallel()
	h := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct{ got, want string }{
		{SpecPath(h), "ceres/task-specifications/" + h + ".json"},
		{RedactedSpecPath(h), "ceres/task-specifications-redacted/" + h + ".json"},
		{SourcePath(3, ExportReportPath), "ceres/sources/0003.export-report.json"},
		{SourcePath(12, CampaignPath), "ceres/sources/0012.campaign.json"},
		{LegacySourcePath(3, ExportReportPath), "ceres/sources/0003/export-report.json"},
		{SourceSibling(SourcePath(3, ExportReportPath), ProfilePath), "ceres/sources/0003.profile.json"},
		{SourceSibling(LegacySourcePath(3, ExportReportPath), ProfilePath), "ceres/sources/0003/profile.json"},
		{SourceSibling(ExportReportPath, ProfilePath), ""},
		{ExportReportPath, "ceres/export-report.json"},
		{MergeReportPath, "ceres/merge-report.json"},
		{SessionPagePath, "ceres/report.html"},
		{OutputMarkerPath, "ceres/output.json"},
		{SealPath, "ceres/seal.json"},
		{VideoColumn("observation.images.front", VideoFromTimestamp), "videos/observation.images.front/from_timestamp"},
		{StatsColumn("action", "q01"), "stats/action/q01"},
		{AttemptRecordName(7), "attempt-0007.json"},
	} {
		if tc.got != tc.want {
			t.Errorf("path %q, want %q", tc.got, tc.want)
		}
	}
}

// TestCeresFiles checks the file table: every entry is under CeresDir and
// unique, lookups find files and files in directories but nothing else.
func TestCeresFiles(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, f := range CeresFiles {
		if seen[f.Path] || f.Path[:len(CeresDir)+1] != CeresDir+"/" {
			t.Errorf("entry %q: duplicate or outside %s", f.Path, CeresDir)
		}
		seen[f.Path] = true
		if !f.InShard && !f.InMerged {
			t.Errorf("entry %q is in no kind of dataset", f.Path)
		}
	}
	h := "00"
	for _, tc := range []struct {
		rel  string
		want string
	}{
		{ExportReportPath, ExportReportPath},
		{SpecPath(h), SpecsDir},
		{RedactedSpecPath(h), RedactedSpecsDir},
		{SourcePath(0, ProfilePath), SourcesDir},
		{LegacySourcePath(0, ProfilePath), SourcesDir},
		{SpecsDir, ""},
		{SpecsDir + "/", ""},
		{CeresDir + "/notes.txt", ""},
		{ExportReportPath + "/x", ""},
	} {
		f, ok := LookupCeresFile(tc.rel)
		if got := f.Path; ok != (tc.want != "") || got != tc.want {
			t.Errorf("LookupCeresFile(%q) = %q %v, want %q", tc.rel, got, ok, tc.want)
		}
	}
	per := PerSourceFiles()
	if len(per) == 0 || per[0] != ExportReportPath {
		t.Errorf("PerSourceFiles = %v: the export report must come first", per)
	}
}

// TestEpisodeColumns checks that every ceres/* column reads and writes its
// own field: a value set through the column is got back through it and
// through no other column.
func TestEpisodeColumns(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for i, c := range EpisodeColumns {
		if names[c.Name] {
			t.Errorf("column %s twice", c.Name)
		}
		names[c.Name] = true
		var e CeresEpisode
		var v any = "v"
		if c.Dtype == "int64" {
			v = int64(7)
		}
		if !c.Set(&e, v) {
			t.Fatalf("%s: Set(%v) refused", c.Name, v)
		}
		if got := c.Get(&e); got != v {
			t.Errorf("%s: Get = %v, want %v", c.Name, got, v)
		}
		for j, o := range EpisodeColumns {
			if j == i || o.Merged && e.Source == nil {
				continue
			}
			if got := o.Get(&e); got == v {
				t.Errorf("setting %s also set %s", c.Name, o.Name)
			}
		}
		if c.Null {
			if !c.Set(&e, nil) || c.Get(&e) != nil {
				t.Errorf("%s: a null does not round-trip", c.Name)
			}
		} else if c.Set(&e, nil) {
			t.Errorf("%s: Set(nil) accepted on a column that is never null", c.Name)
		}
	}
	var plain CeresEpisode
	for _, c := range CeresColumns(true) {
		if c.Merged && c.Get(&plain) != nil {
			t.Errorf("%s of an episode without Source = %v, want nil", c.Name, c.Get(&plain))
		}
	}
	if len(CeresColumns(true)) != len(EpisodeColumns) || len(CeresColumns(false)) >= len(EpisodeColumns) {
		t.Error("CeresColumns(false) must leave out the merged columns, CeresColumns(true) keep all")
	}
}

// TestParseSourcePath reads a source's file back from both forms a merged
// dataset has kept it in, and nothing else.
func TestParseSourcePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rel   string
		index int
		name  string
		ok    bool
	}{
		{SourcePath(3, ExportReportPath), 3, "export-report.json", true},
		{LegacySourcePath(3, ExportReportPath), 3, "export-report.json", true},
		{SourcePath(12345, CampaignPath), 12345, "campaign.json", true},
		{"ceres/sources/0003", 0, "", false},
		{"ceres/sources/0003.", 0, "", false},
		{"ceres/sources/003.campaign.json", 0, "", false},
		{"ceres/sources/00x3.campaign.json", 0, "", false},
		{"ceres/sources/0003/a/b.json", 0, "", false},
		{"ceres/sources/0003/", 0, "", false},
		{"ceres/sourcesX/0003.campaign.json", 0, "", false},
		{ExportReportPath, 0, "", false},
	} {
		index, name, ok := ParseSourcePath(tc.rel)
		if index != tc.index || name != tc.name || ok != tc.ok {
			t.Errorf("ParseSourcePath(%q) = %d %q %v, want %d %q %v", tc.rel, index, name, ok, tc.index, tc.name, tc.ok)
		}
	}
}

// ChunkFile reads back what DataPath, VideoPath and EpisodesPath write,
// and nothing else.
func TestChunkFile(t *testing.T) {
	for _, c := range []struct {
		rel, dir, ext string
		chunk, file   int
		ok            bool
	}{
		{DataPath(0, 0), DataDir, ParquetExt, 0, 0, true},
		{DataPath(12, 1234), DataDir, ParquetExt, 12, 1234, true},
		{VideoPath("observation.images.front", 1, 7), VideoDir("observation.images.front"), VideoExt, 1, 7, true},
		{EpisodesPath(0, 2), EpisodesDir, ParquetExt, 0, 2, true},
		{EpisodesPath(0, 2), DataDir, ParquetExt, 0, 0, false},              // another directory
		{DataPath(0, 2), DataDir, VideoExt, 0, 0, false},                    // another extension
		{"data/chunk-0/file-000.parquet", DataDir, ParquetExt, 0, 0, false}, // fewer than 3 digits
		{"data/x/chunk-000/file-000.parquet", DataDir, ParquetExt, 0, 0, false},
		{"chunk-000/file-000.parquet", DataDir, ParquetExt, 0, 0, false},
		{"data/chunk-99999999999999999999/file-000.parquet", DataDir, ParquetExt, 0, 0, false}, // out of range
	} {
		chunk, file, ok := ChunkFile(c.rel, c.dir, c.ext)
		if chunk != c.chunk || file != c.file || ok != c.ok {
			t.Errorf("ChunkFile(%q, %q, %q) = %d, %d, %v; want %d, %d, %v", c.rel, c.dir, c.ext, chunk, file, ok, c.chunk, c.file, c.ok)
		}
	}
}
