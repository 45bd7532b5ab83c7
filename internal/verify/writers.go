package verify

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
)

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// ourWriter is how every Parquet file ceres-export writes starts its
// created_by ("ceres-export", "ceres-export 0.1.0+…").
const ourWriter = "ceres-export"

// parquetWriter returns the created_by of the Parquet file at path, "" when
// it cannot be read.
func parquetWriter(path string) string {
	f, err := input.Open(path)
	if err != nil {
		return ""
	}
	r, err := file.NewParquetReader(f)
	if err != nil {
		f.Close()
		return ""
	}
	defer r.Close()
	return r.MetaData().GetCreatedBy()
}

// attributeWriters names, on each finding about a file ceres-export did
// not write, the program that did. A Parquet file names its writer
// (created_by); LeRobot's JSON metadata does not, and LeRobot rewrites
// meta/info.json and meta/stats.json whenever it rewrites meta/episodes
// (lerobot-edit-dataset, aggregate_datasets), so those take the writer of
// the first episodes file when that one is foreign; in a foreign dataset
// every file is the foreign writer's.
func (c *checker) attributeWriters() {
	writers := map[string]string{}
	writerOf := func(rel string) string {
		if w, ok := writers[rel]; ok {
			return w
		}
		w := ""
		if strings.HasSuffix(rel, layout.ParquetExt) {
			w = parquetWriter(filepath.Join(c.dir, filepath.FromSlash(rel)))
			if strings.HasPrefix(w, ourWriter) {
				w = ""
			} else if w == "" && c.res.Foreign {
				w = "a writer other than ceres-export"
			}
		}
		writers[rel] = w
		return w
	}
	metaWriter := func() string {
		if w := writerOf(layout.EpisodesPath(0, 0)); w != "" {
			return w
		}
		if c.res.Foreign {
			return "a writer other than ceres-export"
		}
		return ""
	}
	for i := range c.res.Findings {
		f := &c.res.Findings[i]
		switch {
		case f.File == "":
		case f.File == layout.InfoPath || f.File == layout.StatsPath:
			f.Writer = metaWriter()
		case strings.HasSuffix(f.File, layout.ParquetExt):
			f.Writer = writerOf(f.File)
		case c.res.Foreign:
			f.Writer = "a writer other than ceres-export"
		}
	}
}

// foreignNullColumn says whether column name of a merged dataset may hold
// nulls: those a foreign source's episodes leave null
// (layout.EpisodeColumn.ForeignNull); which rows may is isForeignRow's.
func (c *checker) foreignNullColumn(name string) bool {
	if !c.isMerged() {
		return false
	}
	for _, col := range layout.CeresColumns(true) {
		if col.Name == name {
			return col.ForeignNull()
		}
	}
	return false
}

// isForeignRow says whether the episode came from a foreign merge source:
// in a merged dataset, its ceres/session_id is null (checkMerged holds the
// row to a foreign source of the report, and every ForeignNull column of
// it to null: checkForeignRow).
func (c *checker) isForeignRow(er *episodeRow) bool {
	return c.isMerged() && er.Ceres[layout.ColSessionID] == nil
}

// checkForeignRow checks that a foreign episode leaves every ForeignNull
// column null, and that a CERES episode leaves none of the non-nullable
// ones null.
func (c *checker) checkForeignRow(er *episodeRow) {
	foreign := c.isForeignRow(er)
	src := c.episodeSourceOf(er)
	for _, col := range layout.CeresColumns(true) {
		if !col.ForeignNull() {
			continue
		}
		v := er.Ceres[col.Name]
		if col.Merged {
			v = src[col.Name]
		}
		switch {
		case foreign && v != nil:
			c.errorf("ceres.foreign", er.File, ep(er.EpisodeIndex), "ceres/session_id is null, as a foreign episode's, but %s is %s", col.Name, jsonText(v))
		case !foreign && v == nil && !col.Null:
			c.errorf("ceres.missing-column", er.File, ep(er.EpisodeIndex), "%s is null in an episode of a CERES source", col.Name)
		}
	}
}
