package shard

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ceres-robotics/ceres-export/internal/layout"
)

// episodeSpool keeps the builder's meta/episodes records, each episode's
// statistics most of all, out of memory until Finish writes them: in a
// temporary file in the dataset's directory, which Finish removes. Held in
// memory they grew with the episodes (12 MB of a merge of a thousand
// shards' 4,000 episodes) beside the data file being written.
type episodeSpool struct {
	dir   string
	n     int
	files []string // data files of the episodes, in order, each once
	last  DataLocation

	f   *os.File
	out *bufio.Writer
	enc *gob.Encoder
}

// spooledEpisode is an episodeRecord as the spool file holds it. gob
// writes every element of a slice but leaves out a struct field that is
// zero, -0 included: the video timestamps go as their bits.
type spooledEpisode struct {
	Index, Length int64
	Tasks         []string
	Data          DataLocation
	Videos        []spooledVideo
	Stats         []Stats
	Ceres         layout.CeresEpisode
}

type spooledVideo struct {
	ChunkIndex, FileIndex int
	From, To              uint64
	Stats                 Stats
}

// add appends rec.
func (s *episodeSpool) add(rec *episodeRecord) error {
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, ".episodes-*.tmp")
		if err != nil {
			return fmt.Errorf("shard: episode spool: %w", err)
		}
		s.f, s.out = f, bufio.NewWriterSize(f, 1<<16)
		s.enc = gob.NewEncoder(s.out)
	}
	e := spooledEpisode{Index: rec.index, Length: rec.length, Tasks: rec.tasks, Data: rec.data, Stats: rec.stats, Ceres: rec.ceres}
	for _, v := range rec.videos {
		e.Videos = append(e.Videos, spooledVideo{v.ChunkIndex, v.FileIndex, math.Float64bits(v.FromTimestamp), math.Float64bits(v.ToTimestamp), v.Stats})
	}
	if err := s.enc.Encode(&e); err != nil {
		return fmt.Errorf("shard: episode spool %s: %w", s.f.Name(), err)
	}
	if p := layout.DataPath(rec.data.ChunkIndex, rec.data.FileIndex); s.n == 0 || rec.data.ChunkIndex != s.last.ChunkIndex || rec.data.FileIndex != s.last.FileIndex {
		s.files = append(s.files, p)
	}
	s.last = rec.data
	s.n++
	return nil
}

// size is the bytes spooled so far.
func (s *episodeSpool) size() (int64, error) {
	if s.f == nil {
		return 0, nil
	}
	if err := s.out.Flush(); err != nil {
		return 0, fmt.Errorf("shard: episode spool %s: %w", s.f.Name(), err)
	}
	return s.f.Seek(0, io.SeekCurrent)
}

// each calls fn with every record in order; the record is reused.
func (s *episodeSpool) each(fn func(*episodeRecord) error) error {
	if s.n == 0 {
		return nil
	}
	if err := s.out.Flush(); err != nil {
		return fmt.Errorf("shard: episode spool %s: %w", s.f.Name(), err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("shard: episode spool %s: %w", s.f.Name(), err)
	}
	dec := gob.NewDecoder(bufio.NewReaderSize(s.f, 1<<16))
	var rec episodeRecord
	for i := range s.n {
		var e spooledEpisode
		if err := dec.Decode(&e); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("shard: episode spool %s: record %d: %w", s.f.Name(), i, err)
		}
		rec = episodeRecord{index: e.Index, tasks: e.Tasks, length: e.Length, data: e.Data, stats: e.Stats, ceres: e.Ceres, videos: rec.videos[:0]}
		for _, v := range e.Videos {
			rec.videos = append(rec.videos, VideoSegment{v.ChunkIndex, v.FileIndex, math.Float64frombits(v.From), math.Float64frombits(v.To), v.Stats})
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
	return nil
}

// close removes the spool file.
func (s *episodeSpool) close() {
	if s.f != nil {
		_ = s.f.Close()
		_ = os.Remove(s.f.Name())
		s.f = nil
	}
}
