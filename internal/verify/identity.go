package verify

import (
	"math"
	"math/big"
	"sort"

	"github.com/ceres-robotics/ceres-export/internal/media"
)

// Frame identity by content: an exported frame must look like the source
// frame nearest to its time more than like that frame's neighbours, and
// like it within a fidelity bound. It needs no code band, so it holds on a
// real camera's footage.
const (
	// identityStride samples an episode's frames by default: frames 0,
	// 30, 60, … and its last frame (Options.AllFrames: every frame).
	identityStride = 30
	// identityNeighbours is how many source frames either side of the
	// expected one are candidates.
	identityNeighbours = 2
	// identityMargin is how much closer (dB of luma PSNR) another
	// candidate must be than the expected frame to call a miss.
	identityMargin = 0.5
	// minFidelityPSNR is the least luma PSNR an exported frame may have
	// against the source frame it shows, at media.PrintSize: a picture
	// that is not the camera's at all. Measured (docs/video.md): 28.8 dB
	// at the lowest for a 64×48 code-band camera at crf 30 with x264;
	// frames of a natural 128×96 scene shown at the neighbour's time are
	// about 25 dB, but the identity comparison names those. Level errors
	// are Levels', not this bound's.
	minFidelityPSNR = 24.0
	// maxGainError and maxLevelOffset bound a file's levels against its
	// source's, pooled over its compared frames (media.LevelSums):
	// full-range levels passed as limited range are a gain of 1.164. One
	// frame's gain alone moved from 0.94 to 1.06 with its coding (64×48,
	// x264 crf 30); pooled, measured within 0.02.
	maxGainError   = 0.06
	maxLevelOffset = 4.0
)

// identitySampled reports whether frame k of an episode of n frames is
// compared by content.
func (c *checker) identitySampled(k, n int64) bool {
	return c.opts.AllFrames || k%identityStride == 0 || k == n-1
}

// identitySample is one exported frame to compare with the source.
type identitySample struct {
	t       *big.Rat // T_k, journal ns
	episode int64
	k       int64 // frame of the episode
	frame   int64 // frame of the file
	rel     string
	print   media.Planes
	e       int // expected source frame (its decode order), -1 until known
}

// sourcePrint is one source frame's time and print.
type sourcePrint struct {
	t     *big.Rat
	print media.Planes
}

// identityMatcher resolves samples against source frames as they are
// decoded, in time order, holding only the last 2·identityNeighbours+1.
type identityMatcher struct {
	c       *checker
	samples []*identitySample // by time
	next    int               // first sample whose expected frame is unknown
	waiting []*identitySample // expected frame known, neighbours after it not yet decoded
	ring    []sourcePrint     // the last frames, ring[i] is frame base+i
	base    int
	n       int // frames seen
	levels  map[string]*media.LevelSums
	files   []string // levels' keys in first-compared order
}

func newIdentityMatcher(c *checker, samples []*identitySample) *identityMatcher {
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].t.Cmp(samples[j].t) < 0 })
	return &identityMatcher{c: c, samples: samples, levels: map[string]*media.LevelSums{}}
}

// add takes source frame m.n at time t.
func (m *identityMatcher) add(t *big.Rat, p media.Planes) {
	j := m.n
	m.n++
	m.ring = append(m.ring, sourcePrint{t: t, print: p})
	// Expected frames: the nearest, the earlier on a tie (nearestFrame).
	for m.next < len(m.samples) && m.samples[m.next].t.Cmp(t) < 0 {
		s := m.samples[m.next]
		s.e = j
		if j > 0 {
			prev := m.at(j - 1)
			before := new(big.Rat).Sub(s.t, prev.t)
			after := new(big.Rat).Sub(t, s.t)
			if after.Cmp(before) >= 0 {
				s.e = j - 1
			}
		}
		m.waiting = append(m.waiting, s)
		m.next++
	}
	for len(m.waiting) > 0 && m.waiting[0].e+identityNeighbours <= j {
		m.judge(m.waiting[0])
		m.waiting = m.waiting[1:]
	}
	if keep := 2*identityNeighbours + 2; len(m.ring) > keep {
		drop := len(m.ring) - keep
		m.ring = append(m.ring[:0], m.ring[drop:]...)
		m.base += drop
	}
}

// at returns source frame i, which must be held.
func (m *identityMatcher) at(i int) sourcePrint { return m.ring[i-m.base] }

// finish judges what is left once the source has no more frames.
func (m *identityMatcher) finish() {
	if m.n == 0 {
		return
	}
	for ; m.next < len(m.samples); m.next++ {
		s := m.samples[m.next]
		s.e = m.n - 1
		m.waiting = append(m.waiting, s)
	}
	for _, s := range m.waiting {
		m.judge(s)
	}
	m.waiting = nil
	m.judgeLevels()
}

// judge compares one exported frame with its candidates. A neighbour that
// looks more like it is a miss only when it is closer by identityMargin
// and the two source frames differ by more than the export differs from
// the closer one: where neighbours are alike (a still scene) nothing can
// tell them apart, and that is a tie, not a miss.
func (m *identityMatcher) judge(s *identitySample) {
	c := m.c
	lo, hi := max(s.e-identityNeighbours, m.base), min(s.e+identityNeighbours, m.n-1)
	if s.e < m.base || s.e > hi {
		return // cannot happen: the expected frame is always held
	}
	exp := m.at(s.e)
	pe := media.LumaPSNR(s.print, exp.print)
	best, pb := s.e, pe
	for i := lo; i <= hi; i++ {
		if p := media.LumaPSNR(s.print, m.at(i).print); p > pb {
			best, pb = i, p
		}
	}
	loc := epFrame(s.episode, s.frame)
	if best != s.e && pb-pe > identityMargin && media.LumaPSNR(exp.print, m.at(best).print) < pb {
		c.errorf("journal.video-content", s.rel, loc,
			"frame %d of the episode looks like source frame %d (t=%s ns, luma PSNR %.1f dB), not the frame nearest to T=%s ns, source frame %d (t=%s ns, %.1f dB)",
			s.k, best, m.at(best).t.FloatString(0), pb, s.t.FloatString(0), s.e, exp.t.FloatString(0), pe)
		return
	}
	if pe < minFidelityPSNR {
		c.errorf("journal.video-fidelity", s.rel, loc,
			"frame %d of the episode is %.1f dB (luma PSNR) from source frame %d (t=%s ns), the frame nearest to T=%s ns; want at least %.0f dB",
			s.k, pe, s.e, exp.t.FloatString(0), s.t.FloatString(0), minFidelityPSNR)
		return
	}
	ls := m.levels[s.rel]
	if ls == nil {
		ls = &media.LevelSums{}
		m.levels[s.rel] = ls
		m.files = append(m.files, s.rel)
	}
	ls.Add(s.print, exp.print)
}

// judgeLevels reports each file whose levels, pooled over its compared
// frames, are not its source's.
func (m *identityMatcher) judgeLevels() {
	for _, rel := range m.files {
		ls := m.levels[rel]
		gain, offset, du, dv := ls.Levels()
		if math.Abs(gain-1) > maxGainError || math.Abs(offset) > maxLevelOffset || math.Abs(du) > maxLevelOffset || math.Abs(dv) > maxLevelOffset {
			m.c.errorf("journal.video-levels", rel, loc{},
				"over %d compared frames the exported luma has %.3f times the contrast of the source frames they show, and mean differences Y %+.1f, U %+.1f, V %+.1f levels; want gain 1 ± %.2f and each within ±%.0f (full-range levels passed as limited range are 1.164)",
				ls.Frames(), gain, offset, du, dv, maxGainError, maxLevelOffset)
		}
	}
}
