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
