package e2e

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
	"github.com/ceres-robotics/ceres-export/journal"
	"github.com/ceres-robotics/ceres-export/taskspec"
)

// hugeBatchSession writes a session whose one sensor stream is recorded in
// batches SAMPLES records of samplesPer samples of a float32[2048] field
// (8,200 bytes a sample with its time), at 10 kHz, zstd-compressed: each
// record is small in the journal and large decoded. It returns the
// directory and the decoded size of one batch.
func hugeBatchSession(t testing.TB, dir string, batches, samplesPer int) int64 {
	t.Helper()
	const elems = 2048
	const period = 100_000 // ns: 10 kHz
	specJSON := `{"schema":"ceres-task-specification","version":1,"runTitle":"Huge","cycleCount":1,` +
		`"tasks":[{"id":"hold","type":"timed","label":"Hold","instructions":"Hold still","durationS":` +
		strconv.Itoa(batches*samplesPer*period/1e9-1) + `,"repeatCount":1,"resetTimeS":1}]}`
	spec, err := taskspec.Parse([]byte(specJSON))
	if err != nil {
		t.Fatal(err)
	}
	w, err := journal.NewWriter(dir, journal.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.WriteSession(journal.Session{
		Schema: journal.SchemaName, Version: 1, SessionID: "huge-1", StartedAt: "2026-12-01T00:00:00Z",
		Streams: []journal.Stream{{ID: "arm", Kind: journal.KindSensor, RateHz: 1e9 / period, Fields: []journal.Field{
			{Name: "v", Dtype: journal.DtypeFloat32, Shape: []int{elems}},
		}}},
	}))
	must(w.WriteSpec(journal.SpecRecord{T: 0, Hash: spec.Hash(), Specification: json.RawMessage(specJSON)}))
	end := int64(batches * samplesPer * period)
	must(w.WriteEvent(journal.Event{T: 0, Kind: journal.EventRunStart}))
	must(w.WriteEvent(journal.Event{T: 0, Kind: journal.EventCycleStart, Cycle: 1}))
	must(w.WriteEvent(journal.Event{T: 5e8, Kind: journal.EventAttemptStart, Task: "hold", Cycle: 1, Repetition: 1, Attempt: 1}))
	times := make([]int64, samplesPer)
	field := make([]byte, samplesPer*elems*4)
	for b := range batches {
		for i := range times {
			k := b*samplesPer + i
			times[i] = int64(k) * period
			// One slowly changing element per sample: real values, and a
			// body zstd shrinks by three orders of magnitude.
			binary.LittleEndian.PutUint32(field[i*elems*4:], math.Float32bits(float32(k/1000)))
		}
		must(w.WriteSamples(0, times, [][]byte{field}, true))
	}
	must(w.WriteEvent(journal.Event{T: end - 5e8, Kind: journal.EventAttemptEnd, Task: "hold", Cycle: 1, Repetition: 1, Attempt: 1, Cause: "duration"}))
	must(w.WriteEvent(journal.Event{T: end, Kind: journal.EventCycleEnd, Cycle: 1}))
	must(w.WriteEvent(journal.Event{T: end, Kind: journal.EventRunEnd}))
	must(w.WriteEnd(journal.End{T: end, Reason: "completed"}))
	must(w.Close())
	return int64(samplesPer) * (8 + elems*4)
}

// TestE2EExportMemoryBounded exports a session of eight SAMPLES records of
// many MiB decoded each (a few hundred KiB each in the journal) and
// checks the exporter's peak resident memory against the documented bound
// (memoryBound), whatever the number of batches or their compression ratio.
func TestE2EExportMemoryBounded(t *testing.T) {
	testenv.Short(t, "to write and decode 2.5 GiB of samples")
	// 8,000 samples (62 MiB a batch) by default; CERES_MEMTEST_SAMPLES=40000
	// gives the 313 MiB batches of docs/reliability.md.
	samples := 8000
	if v, err := strconv.Atoi(os.Getenv("CERES_MEMTEST_SAMPLES")); err == nil && v > 0 {
		samples = v
	}
	session := filepath.Join(t.TempDir(), "session")
	batch := hugeBatchSession(t, session, 8, samples)
	var journalSize int64
	segs, _ := filepath.Glob(filepath.Join(session, "journal", "*.cjl"))
	for _, s := range segs {
		if fi, err := os.Stat(s); err == nil {
			journalSize += fi.Size()
		}
	}
	dest := filepath.Join(t.TempDir(), "shard")
	peak := peakRSS(t, ceresBinary, "export", session, "-o", dest, "-q", "--fps", "30")
	t.Logf("journal %d KiB, 8 batches of %d MiB decoded: peak RSS %d MiB", journalSize>>10, batch>>20, peak>>20)
	if limit := memoryBound(batch); peak > limit {
		t.Errorf("peak RSS %d MiB over the bound of %d MiB", peak>>20, limit>>20)
	}
}

// memoryBound is the documented peak (docs/reliability.md) for a session
// of one sensor stream whose largest decoded batch is batch bytes: one
// batch decoded at a time, by Open's validating pass and then by the
// cursor, a third for the garbage collector's headroom (GOGC=50: a freed
// batch is collected only when the next one is allocated), and 200 MiB for
// everything else (runtime, Parquet writer, the episode's frames).
func memoryBound(batch int64) int64 {
	return 3*batch + 200<<20
}
