package verify

import (
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"sort"

	"github.com/ceres-robotics/ceres-export/internal/input"
	"github.com/ceres-robotics/ceres-export/internal/layout"
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/internal/media"
	"github.com/ceres-robotics/ceres-export/internal/profile"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// checkJournal compares the shard with what an export of the session at
// Options.Journal must produce by docs/export-semantics.md: the same
// accepted attempts and windows, the held sensor values, and (for synthetic
// sessions, whose frames carry a code band) the chosen video frames.
func (c *checker) checkJournal() error {
	j, err := journal.Open(c.ctx, c.opts.Journal, journal.Options{Salvage: true})
	if err != nil {
		if cerr := c.ctx.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("%w journal %s: %w", ErrUnreadable, c.opts.Journal, err)
	}
	if len(j.Report.Skipped) > 0 {
		c.notef("journal.salvaged", "session:journal", loc{}, "the journal needed salvage (%d byte ranges skipped); compared with what salvage reads", len(j.Report.Skipped))
	}
	if c.info == nil || c.episodes == nil {
		c.notef("journal.skipped", "", loc{}, "comparison with the session skipped: info.json or meta/episodes is unusable")
		return nil
	}
	if j.Spec == nil {
		c.errorf("journal.spec", "session:journal", loc{}, "the session has no SPEC record, so no episode can come from it")
		return nil
	}
	// In a merged dataset only the episodes of this session are compared.
	session, ok := c.storedSessionID(j.Info.SessionID)
	if !ok {
		c.errorf("journal.session-id", privacyMarkerPath, loc{}, "a metadata-only dataset stores salted session ids: comparing it with its session needs --salt")
		return nil
	}
	rows, report := c.episodes.Rows, reportPath
	if c.isMerged() {
		if rows, report = c.sessionRows(session); len(rows) == 0 {
			c.errorf("journal.session-id", mergeReportPath, loc{}, "no episode of the merged dataset comes from session %q", j.Info.SessionID)
			return nil
		}
	}
	c.journalRows, c.journalReport = rows, report
	// The applied specification is the one the episodes name (a re-export
	// may apply a corrected one); it must be stored and valid.
	applied := j.Spec
	if len(rows) > 0 {
		if h, ok := rows[0].Ceres[layout.ColSpecHash].(string); ok && c.specs[h] != nil {
			if s, err := taskspec.Parse(c.specs[h]); err == nil {
				applied = s
			}
		}
	}
	if c.info.FPS < 1 {
		c.notef("journal.skipped", infoPath, loc{}, "comparison with the session skipped: info.json fps %d is unusable", c.info.FPS)
		return nil
	}
	// Fates, windows and frame times come from the checker's own reading
	// of the rules (attempts.go), never from the exporter's plan.
	want := expectExport(j.Events, specTaskType(applied), c.info.FPS)
	recorded := j.Spec.Hash()
	n := len(rows)
	if len(want.episodes) != n {
		c.errorf("journal.episode-count", "", loc{}, "the shard has %d episodes, but the session has %d accepted attempts at %d fps", n, len(want.episodes), c.info.FPS)
	}
	for i, er := range rows {
		epi := er.EpisodeIndex
		key, ok := ceresKey(er)
		if !ok {
			continue
		}
		if s, _ := er.Ceres[layout.ColSessionID].(string); s != session {
			c.errorf("journal.session-id", er.File, ep(epi), "ceres/session_id is %q, but the session is %q (stored as %q)", s, j.Info.SessionID, session)
		}
		if h, _ := er.Ceres[layout.ColRecordedSpecHash].(string); h != recorded {
			c.errorf("journal.recorded-hash", er.File, ep(epi), "ceres/task_specification/recorded_hash is %s, but the journal's SPEC hashes to %s", h, recorded)
		}
		if a, known := want.attempts[key]; !known {
			c.errorf("journal.attempt", er.File, ep(epi), "episode %d is attempt %s, which does not occur in the session", epi, key)
		} else if a.fate != fateAccepted {
			c.errorf("journal.attempt", er.File, ep(epi), "episode %d is attempt %s, which is %s in the session (%s), so no row of it may be exported", epi, key, a.fate, a.why)
		}
		if i >= len(want.episodes) {
			continue
		}
		we := want.episodes[i]
		if we.key != key {
			c.errorf("journal.attempt", er.File, ep(epi), "episode %d is attempt %s, but the session's episode %d is attempt %s", epi, key, i, we.key)
			continue
		}
		start, _ := er.Ceres[layout.ColStartNS].(int64)
		end, _ := er.Ceres[layout.ColEndNS].(int64)
		if start != we.start || end != we.end {
			c.errorf("journal.window", er.File, ep(epi), "episode %d: window is [%d, %d), but attempt %s runs [%d, %d) in the session", epi, start, end, key, we.start, we.end)
		}
		if er.Length != we.length {
			c.errorf("journal.length", er.File, ep(epi), "episode %d: length is %d, but the session's window holds %d frames at %d fps", epi, er.Length, we.length, c.info.FPS)
		}
		var wantOutcome *string
		if we.outcome != "" {
			wantOutcome = &we.outcome
		}
		got, _ := er.Ceres[layout.ColOutcome].(string)
		if (wantOutcome == nil) != (er.Ceres[layout.ColOutcome] == nil) || wantOutcome != nil && *wantOutcome != got {
			c.errorf("journal.outcome", er.File, ep(epi), "episode %d: ceres/outcome is %s, but the session's latest annotation is %s", epi, jsonText(er.Ceres[layout.ColOutcome]), jsonText(wantOutcome))
		}
	}
	if len(want.episodes) != n {
		// Windows of other episodes cannot be lined up row by row.
		return nil
	}
	if err := c.compareSensors(j, want.episodes); err != nil {
		return err
	}
	return c.compareVideo(j, want.episodes)
}

// ceresKey reads the attempt key of an episode row.
func ceresKey(er *episodeRow) (attemptKey, bool) {
	task, ok1 := er.Ceres[layout.ColTaskID].(string)
	cy, ok2 := er.Ceres[layout.ColCycle].(int64)
	rep, ok3 := er.Ceres[layout.ColRepetition].(int64)
	att, ok4 := er.Ceres[layout.ColAttempt].(int64)
	return attemptKey{cycle: cy, task: task, repetition: rep, attempt: att}, ok1 && ok2 && ok3 && ok4
}

// streamSamples is one sensor stream read whole.
type streamSamples struct {
	times  []int64
	fields [][]float64 // per field, samples × elems
	elems  []int
}

func readStream(j *journal.Journal, s journal.Stream) (*streamSamples, error) {
	cur, err := j.Samples(s.ID)
	if err != nil {
		return nil, err
	}
	defer cur.Close()
	ss := &streamSamples{fields: make([][]float64, len(s.Fields)), elems: make([]int, len(s.Fields))}
	for cur.Next() {
		b := cur.Batch()
		ss.times = append(ss.times, b.Times...)
		for fi := range s.Fields {
			ss.elems[fi] = b.FieldElems(fi)
			for e := 0; e < b.Len()*b.FieldElems(fi); e++ {
				ss.fields[fi] = append(ss.fields[fi], b.Float64At(fi, e))
			}
		}
	}
	return ss, cur.Err()
}

// heldSample returns the index of the latest sample with t ≤ T, or 0 (the
// first sample, back-filled) when there is none.
func heldSample(times []int64, T int64) int {
	i := sort.Search(len(times), func(i int) bool { return times[i] > T })
	if i == 0 {
		return 0
	}
	return i - 1
}

// sensorPart is the elements [from, to) of one journal field feeding a
// feature.
type sensorPart struct {
	stream   journal.Stream
	field    int
	from, to int
}

// sensorFeature is a data feature and the journal fields it holds,
// concatenated in order, or (next >= 0) the next frame of another one.
type sensorFeature struct {
	name  string
	parts []sensorPart
	next  int // index in the feature list of the source; -1 otherwise
}

// journalProfile is the feature profile the compared episodes were
// exported with: ceres/profile.json beside their export report (in a
// merged dataset, that of their source shard), nil for none.
func (c *checker) journalProfile() (*profile.Profile, string) {
	if c.journalReport == reportPath {
		return c.profile, layout.ProfilePath
	}
	rel := layout.SourceSibling(c.journalReport, layout.ProfilePath)
	b, err := input.ReadFile(filepath.Join(c.dir, rel))
	if err != nil {
		return nil, rel
	}
	p, err := profile.Parse(rel, b)
	if err != nil {
		c.errorf("ceres.profile", rel, loc{}, "not a valid feature profile: %v", err)
		return nil, rel
	}
	return p, rel
}

// sensorFeatures lists the features whose values come from sensor fields:
// the stored profile (if any) applied to the session. Which field feeds
// which feature is the profile's rule; the values are recomputed here,
// independently of the exporter.
func (c *checker) sensorFeatures(j *journal.Journal) []sensorFeature {
	prof, rel := c.journalProfile()
	res, err := profile.Resolve(prof, j.Info)
	if err != nil {
		c.errorf("journal.profile", rel, loc{}, "the profile does not fit the session: %v", err)
		return nil
	}
	out := make([]sensorFeature, len(res.Features))
	for i, f := range res.Features {
		sf := sensorFeature{name: f.Name, next: f.Next}
		for _, p := range f.Parts {
			sf.parts = append(sf.parts, sensorPart{stream: j.Info.Streams[p.Stream], field: p.Field, from: p.From, to: p.To})
		}
		out[i] = sf
	}
	return out
}

// compareSensors recomputes every sensor feature from the journal's samples
// and compares it row by row: frame k of an episode holds the latest sample
// with t ≤ T_k, or the stream's first sample when there is none.
func (c *checker) compareSensors(j *journal.Journal, episodes []expectedEpisode) error {
	if c.data == nil {
		return nil
	}
	streams := map[string]*streamSamples{}
	load := func(s journal.Stream) (*streamSamples, error) {
		if ss := streams[s.ID]; ss != nil {
			return ss, nil
		}
		ss, err := readStream(j, s)
		if err != nil {
			if cerr := c.ctx.Err(); cerr != nil {
				return nil, cerr
			}
			return nil, fmt.Errorf("%w journal %s stream %s: %w", ErrUnreadable, c.opts.Journal, s.ID, err)
		}
		streams[s.ID] = ss
		return ss, nil
	}
	compared := map[string]bool{}
	features := c.sensorFeatures(j)
	parts := make([][]*streamSamples, len(features))
	usable := make([]bool, len(features))
	for i, sf := range features {
		src := sf
		if sf.next >= 0 {
			src = features[sf.next]
		}
		usable[i] = true
		for _, part := range src.parts {
			ss, err := load(part.stream)
			if err != nil {
				return err
			}
			if len(ss.times) == 0 {
				c.errorf("journal.sensor-value", infoPath, loc{}, "feature %s: stream %s it comes from has no samples in the session", sf.name, part.stream.ID)
				usable[i] = false
			}
			parts[i] = append(parts[i], ss)
		}
	}
	for i, sf := range features {
		f := c.info.byName[sf.name]
		if f == nil {
			c.errorf("journal.missing-feature", infoPath, loc{}, "the session's sensor data make feature %s, which the shard lacks", sf.name)
			continue
		}
		compared[sf.name] = true
		vals, ok := c.data.Values[sf.name]
		if !ok || !usable[i] {
			continue // an unusable column, reported by the data check
		}
		// A derived feature's value at frame k is its source's at frame
		// k+1 of the episode (the last frame: its own).
		src, ps := sf, parts[i]
		if sf.next >= 0 {
			src = features[sf.next]
		}
		width := 0
		for _, part := range src.parts {
			width += part.to - part.from
		}
		if width != f.width() {
			c.errorf("journal.sensor-value", infoPath, loc{}, "feature %s has %d values per row, but its session fields have %d", sf.name, f.width(), width)
			continue
		}
		want := make([]float64, width)
		held := make([]int, len(ps))
		for _, pe := range episodes {
			epi := c.journalRows[pe.index].EpisodeIndex
			de := c.data.Episodes[epi]
			if de == nil || de.Rows != pe.length {
				continue
			}
			for k := range pe.times {
				fk := k
				if sf.next >= 0 && k+1 < len(pe.times) {
					fk = k + 1
				}
				T := pe.times[fk]
				want = want[:0]
				for pi, part := range src.parts {
					ss := ps[pi]
					si := heldSample(ss.times, T)
					held[pi] = si
					w := ss.elems[part.field]
					want = append(want, ss.fields[part.field][si*w+part.from:si*w+part.to]...)
				}
				r := de.FirstRow + int64(k)
				for e, x := range want {
					if f.Dtype == lerobot.Float32 {
						x = float64(float32(x))
					}
					got := vals[r*int64(width)+int64(e)]
					if got != x {
						pi, pe2 := partOf(src, e)
						ss := ps[pi]
						what := ""
						if sf.next >= 0 {
							what = fmt.Sprintf(" (%s at frame %d)", src.name, fk)
						}
						c.errorf("journal.sensor-value", c.data.Files[c.data.RowFile[r]], epRow(epi, r),
							"%s[%d] at frame %d (T=%d ns) is %v, want %v%s: %s.%s[%d] of sample %d (t=%d ns)",
							sf.name, e, k, T, got, x, what, src.parts[pi].stream.ID, src.parts[pi].stream.Fields[src.parts[pi].field].Name, pe2, held[pi], ss.times[held[pi]])
						break
					}
				}
			}
		}
	}
	for _, f := range c.info.dataFeatures() {
		if !compared[f.Name] && !isDefaultFeature(f.Name) {
			c.notef("journal.not-compared", infoPath, loc{}, "feature %s comes from no sensor field of the session; its values were not compared", f.Name)
		}
	}
	return nil
}

// partOf returns which part element e of a feature comes from and the
// element's index within that part's field.
func partOf(sf sensorFeature, e int) (int, int) {
	for pi, part := range sf.parts {
		w := part.to - part.from
		if e < w {
			return pi, part.from + e
		}
		e -= w
	}
	return len(sf.parts) - 1, e
}

func isDefaultFeature(name string) bool { return lerobot.IsDefaultFeature(name) }

// sourceFrame is one decoded camera frame of the session.
type sourceFrame struct {
	t    *big.Rat // journal time, ns
	code int64    // -1 when the code band is unreadable
}

// compareVideo checks that frame k of every episode shows the source frame
// nearest to T_k (the earlier on a tie): by content for the sampled frames
// (identityMatcher), whatever the camera shows, and by code band for every
// frame of a synthetic session's cameras.
func (c *checker) compareVideo(j *journal.Journal, episodes []expectedEpisode) error {
	if c.videos == nil {
		if len(c.info.videoFeatures()) > 0 {
			c.notef("journal.not-compared", "", loc{}, "video frames were not compared with the session (--quick)")
		}
		return nil
	}
	prof, _ := c.journalProfile()
	res, err := profile.Resolve(prof, j.Info)
	if err != nil {
		return nil // reported by the sensor comparison
	}
	streamOf := map[string]string{}
	for _, cam := range res.Cameras {
		streamOf[cam.Key] = cam.Stream
	}
	for _, v := range c.info.videoFeatures() {
		stream, ok := streamOf[v.Name]
		if !ok {
			c.errorf("journal.video-feature", infoPath, loc{}, "video feature %s comes from no camera the profile keeps in the session", v.Name)
			continue
		}
		// The exported frames compared by content, and the size of their
		// prints (every file of a feature has the output size).
		var samples []*identitySample
		pw, ph := 0, 0
		for i, er := range c.journalRows {
			ref := er.Videos[v.Name]
			rel := videoPath(v.Name, ref.Chunk, ref.File)
			vf := c.videos[rel]
			pe := episodes[i]
			if vf == nil || pe.length != er.Length {
				continue
			}
			first := int64(math.Round(ref.From * float64(c.info.FPS)))
			for k, t := range pe.times {
				pr, ok := vf.Prints[first+int64(k)]
				if !ok {
					continue
				}
				pw, ph = pr.W, pr.H
				samples = append(samples, &identitySample{t: big.NewRat(t, 1), episode: er.EpisodeIndex, k: int64(k), frame: first + int64(k), rel: rel, print: pr, e: -1})
			}
		}
		match := newIdentityMatcher(c, samples)
		var frames []sourceFrame
		for _, m := range j.Media {
			if m.Stream != stream {
				continue
			}
			err := c.opts.Video.DecodeEach(c.ctx, filepath.Join(j.Dir, filepath.FromSlash(m.Path)), func(f media.Frame) error {
				t := new(big.Rat).Mul(f.Seconds(), big.NewRat(1e9, 1))
				t.Add(t, big.NewRat(m.StartT, 1))
				if len(frames) > 0 && t.Cmp(frames[len(frames)-1].t) <= 0 {
					return nil // the exporter drops frames that do not advance time
				}
				code := int64(-1)
				if x, ok := f.Pixels.Code(); ok {
					code = int64(x)
				}
				frames = append(frames, sourceFrame{t: t, code: code})
				if len(samples) > 0 {
					pr, err := f.Pixels.Planes(pw, ph)
					if err != nil {
						return err
					}
					match.add(t, pr)
				}
				return nil
			})
			if err != nil && c.ctx.Err() != nil {
				return c.ctx.Err()
			}
			if err != nil {
				c.notef("journal.media", "session:"+m.Path, loc{}, "decoding stopped: %v (frames before it are used)", err)
			}
		}
		match.finish()
		if len(frames) == 0 {
			c.notef("journal.not-compared", "", loc{}, "video feature %s: no decodable camera file of stream %q in the session", v.Name, stream)
			continue
		}
		if frames[0].code < 0 {
			// No code band (a real camera): the content comparison above
			// is the identity check.
			continue
		}
		for i, er := range c.journalRows {
			ref := er.Videos[v.Name]
			rel := videoPath(v.Name, ref.Chunk, ref.File)
			// The episode's first frame in its file (from_timestamp is
			// checked against the frame counts by the metadata check).
			first := int64(math.Round(ref.From * float64(c.info.FPS)))
			vf := c.videos[rel]
			pe := episodes[i]
			if vf == nil || pe.length != er.Length {
				continue
			}
			for k, t := range pe.times {
				fr := first + int64(k)
				if fr >= int64(len(vf.Codes)) {
					break
				}
				T := big.NewRat(t, 1)
				src := nearestFrame(frames, T)
				want, got := frames[src].code, vf.Codes[fr]
				if want >= 0 && got != want {
					c.errorf("journal.video-frame", rel, epFrame(er.EpisodeIndex, fr), "frame %d of the episode shows source frame code %d, want %d (the camera frame nearest to T=%s ns)", k, got, want, T.FloatString(0))
				}
			}
		}
	}
	return nil
}

// nearestFrame returns the frame whose time is nearest to T, the earlier on
// a tie. frames are in increasing time.
func nearestFrame(frames []sourceFrame, T *big.Rat) int {
	i := sort.Search(len(frames), func(i int) bool { return frames[i].t.Cmp(T) > 0 })
	// frames[i-1] ≤ T < frames[i]
	if i == 0 {
		return 0
	}
	if i == len(frames) {
		return i - 1
	}
	before := new(big.Rat).Sub(T, frames[i-1].t)
	after := new(big.Rat).Sub(frames[i].t, T)
	if after.Cmp(before) < 0 {
		return i
	}
	return i - 1
}
