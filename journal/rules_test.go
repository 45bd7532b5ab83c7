package journal

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// sessionJSON returns the test SESSION as JSON after mut changed its generic
// form.
func sessionJSON(t testing.TB, mut func(m map[string]any)) string {
	t.Helper()
	b, err := json.Marshal(testSession())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	mut(m)
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func imuStream(m map[string]any) map[string]any { return m["streams"].([]any)[0].(map[string]any) }

func imuField(m map[string]any, i int) map[string]any {
	return imuStream(m)["fields"].([]any)[i].(map[string]any)
}

// withSession is a segment 1 whose SESSION is session, followed by frames.
func withSession(t testing.TB, session string, frames ...[]byte) []byte {
	return cat(segHeader(1), frame(TypeSession, []byte(session)), cat(frames...))
}

func evFrame(t testing.TB, s string) []byte { return frame(TypeEvent, []byte(s)) }

func samplesFrame(p []byte) []byte { return frame(TypeSamples, p) }

func zstdBody(t testing.TB, raw []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll(raw, nil)
}

type ruleCase struct {
	name    string
	segs    func(t testing.TB) [][]byte
	opts    Options
	want    error  // sentinel; nil: Open succeeds
	wantMsg string // substring of the error message
	wantOff *int64 // offset the *Error names; nil: not checked
	check   func(t *testing.T, j *Journal)
}

func one(b func(t testing.TB) []byte) func(t testing.TB) [][]byte {
	return func(t testing.TB) [][]byte { return [][]byte{b(t)} }
}

// TestFormatRules checks every rule of the format on hand-built bytes.
func TestFormatRules(t *testing.T) {
	t.Parallel()
	plen := int64(len(prefix(t)))
	okEv := `{"t":1,"kind":"run_start"}`
	okEvLen := int64(len(evFrame(t, okEv)))
	sessionOf := func(mut func(m map[string]any)) func(t testing.TB) [][]byte {
		return one(func(t testing.TB) []byte { return withSession(t, sessionJSON(t, mut)) })
	}
	tail := func(frames ...string) func(t testing.TB) [][]byte {
		return one(func(t testing.TB) []byte {
			b := prefix(t)
			for _, f := range frames {
				b = cat(b, evFrame(t, f))
			}
			return b
		})
	}
	samples := func(p ...[]byte) func(t testing.TB) [][]byte {
		return one(func(t testing.TB) []byte {
			b := prefix(t)
			for _, q := range p {
				b = cat(b, samplesFrame(q))
			}
			return b
		})
	}
	badCRC := func(f []byte) []byte { f = cat(f); f[4] ^= 1; return f }

	cases := []ruleCase{
		// Segment files and headers.
		{name: "bad magic", want: ErrBadHeader, wantOff: at(0), segs: one(func(t testing.TB) []byte {
			b := prefix(t)
			b[0] = 'X'
			return b
		})},
		{name: "bad version", want: ErrBadHeader, wantOff: at(8), segs: one(func(t testing.TB) []byte {
			b := prefix(t)
			b[8] = 2
			return b
		})},
		{name: "bad sequence number", want: ErrBadHeader, wantOff: at(12), segs: one(func(t testing.TB) []byte {
			b := prefix(t)
			b[12] = 2
			return b
		})},
		{name: "segment 1 header cut short", want: ErrBadHeader, wantOff: at(0), segs: one(func(t testing.TB) []byte { return segHeader(1)[:10] })},
		{name: "last segment header cut short is a torn tail",
			segs: func(t testing.TB) [][]byte { return [][]byte{prefix(t), segHeader(2)[:7]} },
			check: func(t *testing.T, j *Journal) {
				if j.Report.Torn == nil || *j.Report.Torn != (TornTail{Segment: "000002.cjl", Offset: 0, Bytes: 7}) {
					t.Errorf("torn = %+v", j.Report.Torn)
				}
			}},
		{name: "empty last segment is a torn tail",
			segs: func(t testing.TB) [][]byte { return [][]byte{prefix(t), {}} },
			check: func(t *testing.T, j *Journal) {
				if j.Report.Torn == nil || j.Report.Torn.Segment != "000002.cjl" || j.Report.Torn.Bytes != 0 {
					t.Errorf("torn = %+v", j.Report.Torn)
				}
			}},
		{name: "wrong header in last segment", want: ErrBadHeader, wantOff: at(12),
			segs: func(t testing.TB) [][]byte { return [][]byte{prefix(t), segHeader(3)} }},
		{name: "no segments", want: ErrSegmentGap, segs: func(t testing.TB) [][]byte { return nil }},

		// Frames: corruption versus torn tail.
		{name: "bad CRC followed by a valid frame", want: ErrCorrupt, wantOff: at(plen), wantMsg: "000001.cjl@" + itoa64(plen) + ": checksum mismatch",
			segs: one(func(t testing.TB) []byte { return cat(prefix(t), badCRC(evFrame(t, okEv)), evFrame(t, okEv)) })},
		{name: "length over 16 MiB followed by a valid frame", want: ErrCorrupt, wantOff: at(plen), wantMsg: "over the 16777216-byte limit",
			segs: one(func(t testing.TB) []byte {
				f := evFrame(t, okEv)
				binary.LittleEndian.PutUint32(f, MaxPayload+1)
				return cat(prefix(t), f, evFrame(t, okEv))
			})},
		{name: "type 0 followed by a valid frame", want: ErrCorrupt, wantOff: at(plen), wantMsg: "type 0",
			segs: one(func(t testing.TB) []byte { return cat(prefix(t), frame(0, []byte("{}")), evFrame(t, okEv)) })},
		{name: "invalid frame at the end of a segment that is not the last", want: ErrCorrupt, wantOff: at(plen), wantMsg: "not the last",
			segs: func(t testing.TB) [][]byte {
				return [][]byte{cat(prefix(t), badCRC(evFrame(t, okEv))), cat(segHeader(2), evFrame(t, okEv))}
			}},
		{name: "zeros to the end: preallocated, not torn",
			segs: one(func(t testing.TB) []byte { return cat(prefix(t), evFrame(t, okEv), make([]byte, 4096)) }),
			check: func(t *testing.T, j *Journal) {
				if j.Report.Torn != nil || len(j.Events) != 1 {
					t.Errorf("torn = %+v, events %d; want no torn tail and 1 event", j.Report.Torn, len(j.Events))
				}
			}},
		{name: "torn tail: record cut short",
			segs: one(func(t testing.TB) []byte { return cat(prefix(t), evFrame(t, okEv), evFrame(t, okEv)[:12]) }),
			check: func(t *testing.T, j *Journal) {
				want := TornTail{Segment: "000001.cjl", Offset: plen + okEvLen, Bytes: 12}
				if j.Report.Torn == nil || *j.Report.Torn != want {
					t.Errorf("torn = %+v, want %+v", j.Report.Torn, want)
				}
			}},
		{name: "torn tail: bad CRC on the last frame",
			segs: one(func(t testing.TB) []byte { return cat(prefix(t), evFrame(t, okEv), badCRC(evFrame(t, okEv))) }),
			check: func(t *testing.T, j *Journal) {
				if j.Report.Torn == nil || j.Report.Torn.Offset != plen+okEvLen || j.Report.Torn.Bytes != okEvLen {
					t.Errorf("torn = %+v", j.Report.Torn)
				}
			}},
		{name: "salvage skips a bad frame and reports the range", opts: Options{Salvage: true},
			segs: one(func(t testing.TB) []byte {
				return cat(prefix(t), badCRC(evFrame(t, okEv)), []byte("garbage"), evFrame(t, okEv), evFrame(t, okEv))
			}),
			check: func(t *testing.T, j *Journal) {
				want := []ByteRange{{Segment: "000001.cjl", Offset: plen, Length: okEvLen + 7}}
				if len(j.Report.Skipped) != 1 || j.Report.Skipped[0] != want[0] || len(j.Events) != 2 || j.Report.Torn != nil {
					t.Errorf("skipped = %+v, events %d, torn %+v; want %+v and 2 events", j.Report.Skipped, len(j.Events), j.Report.Torn, want)
				}
			}},
		{name: "salvage in a segment that is not the last skips to its end", opts: Options{Salvage: true},
			segs: func(t testing.TB) [][]byte {
				return [][]byte{cat(prefix(t), badCRC(evFrame(t, okEv))), cat(segHeader(2), evFrame(t, okEv))}
			},
			check: func(t *testing.T, j *Journal) {
				if len(j.Report.Skipped) != 1 || j.Report.Skipped[0] != (ByteRange{Segment: "000001.cjl", Offset: plen, Length: okEvLen}) || len(j.Events) != 1 {
					t.Errorf("skipped = %+v, events %d", j.Report.Skipped, len(j.Events))
				}
			}},
		{name: "unknown record type is skipped and counted",
			segs: one(func(t testing.TB) []byte {
				return cat(prefix(t), frame(9, []byte{1, 2, 3}), frame(9, nil), frame(200, []byte("x")), evFrame(t, okEv))
			}),
			check: func(t *testing.T, j *Journal) {
				if j.Report.UnknownRecordTypes[9] != 2 || j.Report.UnknownRecordTypes[200] != 1 || len(j.Events) != 1 {
					t.Errorf("unknown = %v", j.Report.UnknownRecordTypes)
				}
			}},
		{name: "unknown event kind is skipped and counted, members unchecked",
			segs: tail(`{"t":5,"kind":"levitate","cycle":"x"}`, `{"t":1,"kind":"run_start"}`, `{"t":0,"kind":"levitate"}`),
			check: func(t *testing.T, j *Journal) {
				if j.Report.UnknownEventKinds["levitate"] != 2 || len(j.Events) != 1 {
					t.Errorf("unknown kinds = %v, events %v", j.Report.UnknownEventKinds, j.Events)
				}
			}},
		{name: "no END is unterminated", segs: tail(okEv),
			check: func(t *testing.T, j *Journal) {
				if !j.Report.Unterminated || j.End != nil {
					t.Errorf("unterminated = %v, end %v", j.Report.Unterminated, j.End)
				}
			}},

		// SESSION.
		{name: "first record is not SESSION", want: ErrInvalid, wantOff: at(SegmentHeaderSize),
			segs: one(func(t testing.TB) []byte { return cat(segHeader(1), jsonFrame(t, TypeSpec, testSpecRecord(t))) })},
		{name: "unknown record before SESSION", want: ErrInvalid, wantOff: at(SegmentHeaderSize),
			segs: one(func(t testing.TB) []byte {
				return cat(segHeader(1), frame(9, nil), jsonFrame(t, TypeSession, testSession()))
			})},
		{name: "no SESSION at all", want: ErrInvalid, wantOff: at(SegmentHeaderSize), segs: one(func(t testing.TB) []byte { return segHeader(1) })},
		{name: "second SESSION", want: ErrInvalid, wantOff: at(plen), segs: one(func(t testing.TB) []byte {
			return cat(prefix(t), jsonFrame(t, TypeSession, testSession()))
		})},
		{name: "SESSION in segment 2", want: ErrInvalid, wantOff: at(SegmentHeaderSize), segs: func(t testing.TB) [][]byte {
			return [][]byte{segHeader(1), cat(segHeader(2), jsonFrame(t, TypeSession, testSession()))}
		}},
		{name: "SESSION not an object", want: ErrInvalid, wantOff: at(SegmentHeaderSize), segs: one(func(t testing.TB) []byte { return withSession(t, `[1]`) })},
		{name: "SESSION null", want: ErrInvalid, wantOff: at(SegmentHeaderSize), segs: one(func(t testing.TB) []byte { return withSession(t, `null`) })},
		{name: "SESSION not UTF-8", want: ErrInvalid, wantOff: at(SegmentHeaderSize), segs: one(func(t testing.TB) []byte {
			return withSession(t, strings.Replace(sessionJSON(t, func(map[string]any) {}), "test-1", "test-\xff", 1))
		})},
		{name: "SESSION wrong schema", want: ErrInvalid, wantOff: at(SegmentHeaderSize), segs: sessionOf(func(m map[string]any) { m["schema"] = "x" })},
		{name: "SESSION version 2", want: ErrInvalid, wantMsg: "version 2", segs: sessionOf(func(m map[string]any) { m["version"] = 2 })},
		{name: "SESSION missing version", want: ErrInvalid, wantMsg: `missing "version"`, segs: sessionOf(func(m map[string]any) { delete(m, "version") })},
		{name: "SESSION missing sessionId", want: ErrInvalid, wantMsg: `missing "sessionId"`, segs: sessionOf(func(m map[string]any) { delete(m, "sessionId") })},
		{name: "SESSION missing startedAt", want: ErrInvalid, wantMsg: `missing "startedAt"`, segs: sessionOf(func(m map[string]any) { delete(m, "startedAt") })},
		{name: "SESSION missing streams", want: ErrInvalid, wantMsg: `missing "streams"`, segs: sessionOf(func(m map[string]any) { delete(m, "streams") })},
		{name: "SESSION startedAt not RFC 3339", want: ErrInvalid, wantMsg: "RFC 3339", segs: sessionOf(func(m map[string]any) { m["startedAt"] = "yesterday" })},
		{name: "SESSION startedAt not UTC", want: ErrInvalid, wantMsg: "not UTC", segs: sessionOf(func(m map[string]any) { m["startedAt"] = "2026-11-29T10:00:00+01:00" })},
		{name: "SESSION optional members absent, unknown member ignored", segs: sessionOf(func(m map[string]any) {
			delete(m, "robotType")
			delete(m, "recorder")
			m["futureMember"] = map[string]any{"x": 1}
		})},
		{name: "stream id pattern", want: ErrInvalid, wantMsg: "does not match", segs: sessionOf(func(m map[string]any) { imuStream(m)["id"] = "Imu" })},
		{name: "stream id unique", want: ErrInvalid, wantMsg: "not unique", segs: sessionOf(func(m map[string]any) {
			m["streams"].([]any)[1].(map[string]any)["id"] = "imu"
		})},
		{name: "stream kind", want: ErrInvalid, wantMsg: "kind", segs: sessionOf(func(m map[string]any) { imuStream(m)["kind"] = "lidar" })},
		{name: "field name pattern", want: ErrInvalid, wantMsg: "does not match", segs: sessionOf(func(m map[string]any) { imuField(m, 0)["name"] = "9seq" })},
		{name: "field name unique", want: ErrInvalid, wantMsg: "not unique", segs: sessionOf(func(m map[string]any) { imuField(m, 1)["name"] = "seq" })},
		{name: "field dtype", want: ErrInvalid, wantMsg: "dtype", segs: sessionOf(func(m map[string]any) { imuField(m, 0)["dtype"] = "float16" })},
		{name: "field shape zero", want: ErrInvalid, wantMsg: "positive", segs: sessionOf(func(m map[string]any) { imuField(m, 1)["shape"] = []int{3, 0} })},
		{name: "field shape negative", want: ErrInvalid, wantMsg: "positive", segs: sessionOf(func(m map[string]any) { imuField(m, 1)["shape"] = []int{-3} })},
		{name: "field shape not integer", want: ErrInvalid, segs: sessionOf(func(m map[string]any) { imuField(m, 1)["shape"] = []float64{1.5} })},
		{name: "field shape absurd", want: ErrInvalid, wantMsg: "larger than", segs: sessionOf(func(m map[string]any) {
			imuField(m, 1)["shape"] = []int{1 << 20, 1 << 20, 1 << 20}
		})},

		// SPEC.
		{name: "SPEC after EVENT", want: ErrInvalid, wantMsg: "after the first EVENT", segs: one(func(t testing.TB) []byte {
			return withSession(t, sessionJSON(t, func(map[string]any) {}), evFrame(t, `{"t":1,"kind":"future_kind"}`), jsonFrame(t, TypeSpec, testSpecRecord(t)))
		})},
		{name: "second SPEC", want: ErrInvalid, wantMsg: "second SPEC", segs: one(func(t testing.TB) []byte {
			return cat(prefix(t), jsonFrame(t, TypeSpec, testSpecRecord(t)))
		})},
		{name: "EVENT before SPEC", want: ErrInvalid, wantMsg: "before the SPEC", segs: one(func(t testing.TB) []byte {
			return withSession(t, sessionJSON(t, func(map[string]any) {}), evFrame(t, okEv))
		})},
		{name: "SPEC hash mismatch", want: ErrSpec, wantMsg: "differs", segs: one(func(t testing.TB) []byte {
			s := testSpecRecord(t)
			s.Hash = strings.Repeat("0", 64)
			return withSession(t, sessionJSON(t, func(map[string]any) {}), jsonFrame(t, TypeSpec, s))
		})},
		{name: "SPEC specification invalid", want: ErrSpec, segs: one(func(t testing.TB) []byte {
			s := testSpecRecord(t)
			s.Specification = json.RawMessage(`{"schema":"ceres-task-specification","version":1}`)
			return withSession(t, sessionJSON(t, func(map[string]any) {}), jsonFrame(t, TypeSpec, s))
		})},
		{name: "SPEC hash not hex", want: ErrInvalid, wantMsg: "hex", segs: one(func(t testing.TB) []byte {
			s := testSpecRecord(t)
			s.Hash = strings.ToUpper(s.Hash)
			return withSession(t, sessionJSON(t, func(map[string]any) {}), jsonFrame(t, TypeSpec, s))
		})},
		{name: "SPEC missing specification", want: ErrInvalid, wantMsg: `missing "specification"`, segs: one(func(t testing.TB) []byte {
			return withSession(t, sessionJSON(t, func(map[string]any) {}), frame(TypeSpec, []byte(`{"t":0,"hash":"`+strings.Repeat("a", 64)+`"}`)))
		})},

		// EVENT.
		{name: "event time goes backwards", want: ErrInvalid, wantOff: at(plen + okEvLen), wantMsg: "before the previous",
			segs: tail(okEv, `{"t":0,"kind":"run_end"}`)},
		{name: "event equal times are fine", segs: tail(okEv, `{"t":1,"kind":"run_end"}`)},
		{name: "event missing t", want: ErrInvalid, wantMsg: `missing "t"`, segs: tail(`{"kind":"run_start"}`)},
		{name: "event missing kind", want: ErrInvalid, wantMsg: `missing "kind"`, segs: tail(`{"t":1}`)},
		{name: "cycle 0", want: ErrInvalid, wantMsg: "cycle 0 is not positive", segs: tail(`{"t":1,"kind":"cycle_start","cycle":0}`)},
		{name: "cycle missing", want: ErrInvalid, wantMsg: `missing "cycle"`, segs: tail(`{"t":1,"kind":"cycle_end"}`)},
		{name: "attempt negative", want: ErrInvalid, wantMsg: "attempt -1", segs: tail(`{"t":1,"kind":"attempt_start","task":"wave","cycle":1,"repetition":1,"attempt":-1}`)},
		{name: "repetition 0", want: ErrInvalid, wantMsg: "repetition 0", segs: tail(`{"t":1,"kind":"retry","task":"wave","cycle":1,"repetition":0,"attempt":1}`)},
		{name: "counter not an integer", want: ErrInvalid, segs: tail(`{"t":1,"kind":"cycle_start","cycle":1.5}`)},
		{name: "task missing", want: ErrInvalid, wantMsg: `missing "task"`, segs: tail(`{"t":1,"kind":"reset_start","cycle":1,"repetition":1,"attempt":1}`)},
		{name: "task not in spec", want: ErrInvalid, wantMsg: "not a task", segs: tail(`{"t":1,"kind":"attempt_start","task":"jump","cycle":1,"repetition":1,"attempt":1}`)},
		{name: "attempt_end bad cause", want: ErrInvalid, wantMsg: "cause", segs: tail(`{"t":1,"kind":"attempt_end","task":"wave","cycle":1,"repetition":1,"attempt":1,"cause":"bored"}`)},
		{name: "annotate bad outcome", want: ErrInvalid, wantMsg: "outcome", segs: tail(`{"t":1,"kind":"annotate","task":"wave","cycle":1,"repetition":1,"attempt":1,"outcome":"meh"}`)},
		{name: "prompt missing text", want: ErrInvalid, wantMsg: `missing "text"`, segs: tail(`{"t":1,"kind":"prompt"}`)},
		{name: "pause_start needs task and cycle", want: ErrInvalid, wantMsg: `missing "task"`, segs: tail(`{"t":1,"kind":"pause_start","cycle":1}`)},
		{name: "every known kind with its members", segs: tail(
			`{"t":1,"kind":"run_start"}`,
			`{"t":1,"kind":"cycle_start","cycle":1}`,
			`{"t":2,"kind":"attempt_start","task":"wave","cycle":1,"repetition":1,"attempt":1}`,
			`{"t":3,"kind":"retry","task":"wave","cycle":1,"repetition":1,"attempt":1}`,
			`{"t":3,"kind":"attempt_end","task":"wave","cycle":1,"repetition":1,"attempt":1,"cause":"stop"}`,
			`{"t":4,"kind":"annotate","task":"wave","cycle":1,"repetition":1,"attempt":1,"outcome":"clear"}`,
			`{"t":5,"kind":"reset_start","task":"wave","cycle":1,"repetition":1,"attempt":1}`,
			`{"t":6,"kind":"reset_end","task":"wave","cycle":1,"repetition":1,"attempt":1}`,
			`{"t":7,"kind":"pause_start","task":"wave","cycle":1}`,
			`{"t":8,"kind":"pause_end","task":"wave","cycle":1}`,
			`{"t":9,"kind":"prompt","text":"go","task":"wave","unknownMember":[1]}`,
			`{"t":9,"kind":"prompt","text":""}`,
			`{"t":10,"kind":"cycle_end","cycle":1,"attempt":-5}`,
			`{"t":11,"kind":"run_end"}`),
			check: func(t *testing.T, j *Journal) {
				if len(j.Events) != 14 || j.Events[10].Task != "wave" || j.Events[12].Attempt != 0 || j.Events[4].Cause != "stop" {
					t.Errorf("events = %+v", j.Events)
				}
			}},

		// SAMPLES.
		{name: "samples ok raw and zstd", segs: samples(
			samplesPayload(0, encodingRaw, 0, 3, rawImuBody(0, 3)),
			samplesPayload(0, encodingZstd, 0, 2, zstdBody(t, rawImuBody(3, 2)))),
			check: func(t *testing.T, j *Journal) {
				times, fields := allSamples(t, j, "imu")
				if len(times) != 5 || times[4] != 4e8 || string(fields[0]) != string(cat(imuFieldBytes(0, 5, 0))) {
					t.Errorf("times %v", times)
				}
			}},
		{name: "samples payload shorter than header", want: ErrInvalid, wantOff: at(plen), wantMsg: "shorter", segs: samples([]byte{0, 0, 0})},
		{name: "samples stream index out of range", want: ErrInvalid, wantMsg: "out of range", segs: samples(samplesPayload(2, 0, 0, 1, rawImuBody(0, 1)))},
		{name: "samples of a video stream", want: ErrInvalid, wantMsg: "not a sensor", segs: samples(samplesPayload(1, 0, 0, 1, rawImuBody(0, 1)))},
		{name: "samples reserved nonzero", want: ErrInvalid, wantMsg: "reserved", segs: samples(samplesPayload(0, 0, 1, 1, rawImuBody(0, 1)))},
		{name: "samples encoding 2", want: ErrInvalid, wantMsg: "encoding", segs: samples(samplesPayload(0, 2, 0, 1, rawImuBody(0, 1)))},
		{name: "samples n 0", want: ErrInvalid, wantMsg: "n is 0", segs: samples(samplesPayload(0, 0, 0, 0, nil))},
		{name: "samples body short", want: ErrInvalid, wantMsg: "need exactly 48", segs: samples(samplesPayload(0, 0, 0, 2, rawImuBody(0, 2)[:47]))},
		{name: "samples body long", want: ErrInvalid, wantMsg: "need exactly 48", segs: samples(samplesPayload(0, 0, 0, 2, cat(rawImuBody(0, 2), []byte{0})))},
		{name: "samples n absurd", want: ErrInvalid, wantMsg: "batch limit", segs: samples(samplesPayload(0, 0, 0, 0xffffffff, rawImuBody(0, 2)))},
		{name: "samples zstd too short", want: ErrInvalid, wantMsg: "need exactly", segs: samples(samplesPayload(0, 1, 0, 3, zstdBody(t, rawImuBody(0, 2))))},
		{name: "samples zstd too long", want: ErrInvalid, wantMsg: "zstd", segs: samples(samplesPayload(0, 1, 0, 1, zstdBody(t, rawImuBody(0, 2))))},
		{name: "samples zstd garbage", want: ErrInvalid, wantMsg: "zstd", segs: samples(samplesPayload(0, 1, 0, 1, []byte("not zstd at all")))},
		{name: "samples times backwards in a batch", want: ErrInvalid, wantMsg: "before sample", segs: samples(func() []byte {
			b := rawImuBody(0, 2)
			binary.LittleEndian.PutUint64(b[8:], 0)
			binary.LittleEndian.PutUint64(b[0:], 5)
			return samplesPayload(0, 0, 0, 2, b)
		}())},
		{name: "samples times backwards across batches", want: ErrInvalid, wantMsg: "previous batch", segs: samples(
			samplesPayload(0, 0, 0, 2, rawImuBody(5, 2)), samplesPayload(0, 0, 0, 2, rawImuBody(4, 2)))},
		{name: "samples equal times across batches are fine", segs: samples(
			samplesPayload(0, 0, 0, 2, rawImuBody(5, 2)), samplesPayload(0, 0, 0, 2, rawImuBody(6, 2)))},

		// MEDIA.
		{name: "media path with ..", want: ErrInvalid, wantMsg: "leaves", segs: media(`media/../../x.webm`)},
		{name: "media absolute path", want: ErrInvalid, wantMsg: "absolute", segs: media(`/etc/passwd`)},
		{name: "media backslash", want: ErrInvalid, wantMsg: "use /", segs: media(`media\\x.webm`)},
		{name: "media empty path", want: ErrInvalid, wantMsg: "empty", segs: media(``)},
		{name: "media undeclared stream", want: ErrInvalid, wantMsg: "not declared", segs: one(func(t testing.TB) []byte {
			return cat(prefix(t), frame(TypeMedia, []byte(`{"t":1,"stream":"back","path":"media/x.webm","startT":0}`)))
		})},
		{name: "media missing startT", want: ErrInvalid, wantMsg: `missing "startT"`, segs: one(func(t testing.TB) []byte {
			return cat(prefix(t), frame(TypeMedia, []byte(`{"t":1,"stream":"front","path":"media/x.webm"}`)))
		})},
		{name: "media file not there yet is reported", segs: media(`media/front/000001.webm`),
			check: func(t *testing.T, j *Journal) {
				if len(j.Media) != 1 || len(j.Report.MissingMedia) != 1 || j.Report.MissingMedia[0] != "media/front/000001.webm" {
					t.Errorf("media %v missing %v", j.Media, j.Report.MissingMedia)
				}
			}},

		// END.
		{name: "record after END", want: ErrInvalid, wantMsg: "after END", segs: one(func(t testing.TB) []byte {
			return cat(prefix(t), frame(TypeEnd, []byte(`{"t":1,"reason":"completed"}`)), evFrame(t, okEv))
		})},
		{name: "unknown record after END is skipped", segs: one(func(t testing.TB) []byte {
			return cat(prefix(t), frame(TypeEnd, []byte(`{"t":1,"reason":"stopped"}`)), frame(42, nil))
		})},
		{name: "END bad reason", want: ErrInvalid, wantMsg: "reason", segs: one(func(t testing.TB) []byte {
			return cat(prefix(t), frame(TypeEnd, []byte(`{"t":1,"reason":"tired"}`)))
		})},
		{name: "END in a segment that is not the last", want: ErrInvalid, wantMsg: "not the last", segs: func(t testing.TB) [][]byte {
			return [][]byte{cat(prefix(t), frame(TypeEnd, []byte(`{"t":1,"reason":"completed"}`))), segHeader(2)}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeSegments(t, c.segs(t)...)
			j, err := open(t, dir, c.opts)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if c.check != nil {
					c.check(t, j)
				}
				return
			}
			if err == nil {
				t.Fatalf("Open succeeded, want %v", c.want)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
			for _, other := range []error{ErrCorrupt, ErrSegmentGap, ErrBadHeader, ErrInvalid, ErrSpec} {
				if other != c.want && errors.Is(err, other) {
					t.Errorf("error %v also matches %v", err, other)
				}
			}
			if c.wantMsg != "" && !strings.Contains(err.Error(), c.wantMsg) {
				t.Errorf("error %q does not contain %q", err, c.wantMsg)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if fe.Segment == "" {
				t.Errorf("error %v names no segment", err)
			}
			if c.wantOff != nil && fe.Offset != *c.wantOff {
				t.Errorf("error offset %d, want %d (%v)", fe.Offset, *c.wantOff, err)
			}
		})
	}
}

func at(v int64) *int64 { return &v }

func itoa64(v int64) string { b, _ := json.Marshal(v); return string(b) }

// imuFieldBytes returns field k of imu samples first … first+n-1.
func imuFieldBytes(first, n, k int) []byte { _, f := imuFields(first, n); return f[k] }

func media(path string) func(t testing.TB) [][]byte {
	return one(func(t testing.TB) []byte {
		m, err := json.Marshal(Media{T: 1, Stream: "front", Path: path, Container: "webm"})
		if err != nil {
			t.Fatal(err)
		}
		return cat(prefix(t), frame(TypeMedia, m))
	})
}

// TestSegmentGap checks that a missing segment number is an error.
func TestSegmentGap(t *testing.T) {
	t.Parallel()
	dir := writeSegments(t, prefix(t), segHeader(2), segHeader(3))
	if err := os.Remove(filepath.Join(dir, "journal", "000002.cjl")); err != nil {
		t.Fatal(err)
	}
	_, err := open(t, dir, Options{})
	if !errors.Is(err, ErrSegmentGap) || !strings.Contains(err.Error(), "000002.cjl") {
		t.Fatalf("Open = %v, want a gap at 000002.cjl", err)
	}
	if _, err := open(t, t.TempDir(), Options{}); !errors.Is(err, ErrSegmentGap) {
		t.Fatalf("Open of a directory without journal/ = %v, want ErrSegmentGap", err)
	}
}

// TestMediaSymlink checks that a MEDIA file reached through a link out of the
// session directory is an error, and one inside it is fine.
func TestMediaSymlink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		target  func(dir string) string
		wantErr bool
	}{
		{"link out", func(string) string { return t.TempDir() }, true},
		{"link inside", func(dir string) string { return filepath.Join(dir, "elsewhere") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSegments(t, media("media/front/000001.webm")(t)...)
			target := tc.target(dir)
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(target, "000001.webm"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "media"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, "media", "front")); err != nil {
				t.Fatal(err)
			}
			j, err := open(t, dir, Options{})
			if tc.wantErr {
				var fe *Error
				if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Offset != int64(len(prefix(t))) {
					t.Fatalf("Open = %v, want ErrInvalid at the MEDIA record", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(j.Report.MissingMedia) != 0 {
				t.Errorf("missing media %v", j.Report.MissingMedia)
			}
		})
	}
}
