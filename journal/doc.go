// Package journal reads and writes the CERES source journal, format version 1
// (docs/journal-format.md in the repository is the contract; this comment
// restates its wire format so that the code can be checked against it).
//
// # Session directory
//
//	<session>/journal/000001.cjl   segments, numbered from 000001, no gaps
//	<session>/journal/000002.cjl
//	<session>/media/...           camera files named by MEDIA records
//
// # Segment file
//
// A 16-byte header followed by records, back to back.
//
//	offset size field
//	0      8    magic, ASCII "CERESJNL"
//	8      4    format version, uint32 LE, 1
//	12     4    segment sequence number, uint32 LE, equals the file name's number
//
// # Record frame
//
//	offset size field
//	0      4    L, payload length, uint32 LE, at most 16 MiB (16,777,216)
//	4      4    CRC-32C (Castagnoli) of the type byte followed by the payload, uint32 LE
//	8      1    record type: 1 SESSION, 2 SPEC, 3 EVENT, 4 SAMPLES, 5 MEDIA, 6 END
//	9      L    payload (JSON object, except SAMPLES)
//
// Type 0 is reserved and invalid; other unknown types are skipped and counted.
//
// # SAMPLES payload
//
//	offset size field
//	0      2    stream index into SESSION.streams, uint16 LE
//	2      1    body encoding: 0 raw, 1 zstd (one frame decompressing to the raw body)
//	3      1    reserved, 0
//	4      4    n, number of samples, at least 1, uint32 LE
//	8      ...  body
//
// The raw body is n int64 LE times, then for each field in SESSION order n
// values, each product(shape) elements of its dtype, row-major (float32 4,
// float64 8, int32 4, int64 8, uint8 1, bool 1 byte). Its size is exactly
// 8n + n·Σ fieldsize.
//
// # Example
//
// A segment holding a SESSION and one raw SAMPLES record of stream 0 with one
// int32 field and n = 2 (t = 0, 100 ms; values 7, 8):
//
//	43 45 52 45 53 4a 4e 4c  01 00 00 00  01 00 00 00   "CERESJNL", version 1, segment 1
//	L=ec 00 00 00  crc  01  {"schema":"ceres-journal",...}           SESSION
//	L=20 00 00 00  crc  04                                           SAMPLES, 32-byte payload:
//	  00 00  00  00  02 00 00 00                                     stream 0, raw, reserved, n=2
//	  00 00 00 00 00 00 00 00  00 e1 f5 05 00 00 00 00               t = 0, 100000000
//	  07 00 00 00  08 00 00 00                                       seq = 7, 8
//
// # Torn tail, restart and corruption
//
// Zero bytes from a frame to the end of a segment are space a preallocating
// recorder has not written: not a record (type 0 is never valid), not
// damage. An invalid frame (cut short, L over 16 MiB, L past the end of the
// file, type 0, bad CRC) in the last segment after which no valid frame can
// be found up to the end of the file is a torn tail: the records before it
// are read and [Report].Torn says where the tear is. The same tear at the end
// of a segment whose next segment starts with a SESSION record is a recorder
// restart: a restarted recorder starts a new segment and writes the
// session's SESSION record again as its first record (it must be the
// session's own: same sessionId and streams), and [Report].Restarts lists
// the segment and the torn range. Any other invalid frame is corruption:
// [Open] fails with an [*Error] that matches [ErrCorrupt], unless
// [Options].Salvage is set, in which case the reader resyncs on the next valid
// frame and lists every skipped byte range in [Report].Skipped. The decision
// is made by evidence: the reader scans forward byte by byte for an offset
// where a frame whose length fits validates (see [FrameReader.FindValid]).
//
// # Decisions where the format leaves room
//
//   - A last segment other than the first, shorter than its header, whose
//     bytes are a prefix of the right header (a crash while starting a
//     segment) is a torn tail at offset 0, not a bad header: the same crash
//     the format allows at a record. The first segment cut short in its
//     header is a bad header ([ErrBadHeader]): before its SESSION record
//     there is no session to read.
//   - A SAMPLES reserved byte that is not 0 is invalid (the format says it is
//     0; accepting other values would give a later format's meaning no way to
//     be noticed).
//   - A raw SAMPLES body, once decompressed, may be at most [MaxSamplesBody].
//   - A known record type after END is invalid (END is the last record); an
//     unknown type after END is skipped and counted, like anywhere else.
//   - An EVENT of unknown kind still counts as "the first EVENT" that SPEC
//     must precede; its members are not checked.
//   - A known event's task must be a task id of the specification; a MEDIA
//     record's stream must be declared in SESSION.
//   - A MEDIA path must not contain a backslash or NUL (the format says it
//     uses /); a file that does not exist yet is reported, not an error.
//
// # Reading
//
// [Open] makes one streaming pass over all segments: it checks every frame,
// validates every record, holds the SESSION, SPEC, EVENT, MEDIA and END
// records (small) and indexes the SAMPLES records per stream without holding
// them. [Journal.Samples] then reads one stream's batches on demand through a
// [SampleCursor]. [FrameReader] is the low-level frame iterator.
//
// # Writing
//
// [Writer] appends records in this format with one write per record, rolls to
// a new segment at a size limit and calls fsync at attempt boundaries and at
// least once per sync interval.
package journal

import "strconv"

// Wire format, never change. Sizes are derived from each other.
const (
	// segmentMagic opens every segment file.
	segmentMagic = "CERESJNL"
	// formatVersion is the journal format version this package reads and writes.
	formatVersion = 1

	segmentMagicSize    = 8 // len(segmentMagic)
	segmentVersionSize  = 4
	segmentSequenceSize = 4
	// SegmentHeaderSize is the size of a segment header: magic, version, sequence.
	SegmentHeaderSize = segmentMagicSize + segmentVersionSize + segmentSequenceSize

	frameLengthSize = 4
	frameCRCSize    = 4
	frameTypeSize   = 1
	// FrameHeaderSize is the size of a record frame before its payload.
	FrameHeaderSize = frameLengthSize + frameCRCSize + frameTypeSize
	// MaxPayload is the largest payload length L a frame may declare.
	MaxPayload = 16 << 20

	// Record types.
	TypeSession = 1
	TypeSpec    = 2
	TypeEvent   = 3
	TypeSamples = 4
	TypeMedia   = 5
	TypeEnd     = 6

	samplesStreamSize   = 2
	samplesEncodingSize = 1
	samplesReservedSize = 1
	samplesCountSize    = 4
	// samplesHeaderSize is the size of a SAMPLES payload before its body.
	samplesHeaderSize = samplesStreamSize + samplesEncodingSize + samplesReservedSize + samplesCountSize
	sampleTimeSize    = 8

	// encodingRaw and encodingZstd are the SAMPLES body encodings.
	encodingRaw  = 0
	encodingZstd = 1
)

// MaxSamplesBody is the largest raw SAMPLES body, in bytes, this package
// accepts (8n + n·Σ fieldsize). The format sets no limit, but a zstd body of at
// most 16 MiB can claim to expand to almost anything, and a reader must bound
// the memory one batch may take: 1 GiB is 64 times the largest raw body that
// fits in a frame, far above the compression ratio of real sensor data, and
// still an amount a machine that exports sessions can hold.
const MaxSamplesBody = 1 << 30

// SchemaName is the value of SESSION.schema.
const SchemaName = "ceres-journal"

// recordName returns the name of record type typ ("SESSION", "SAMPLES", ...),
// or "type N" for a type this format does not define.
func recordName(typ uint8) string {
	switch typ {
	case TypeSession:
		return "SESSION"
	case TypeSpec:
		return "SPEC"
	case TypeEvent:
		return "EVENT"
	case TypeSamples:
		return "SAMPLES"
	case TypeMedia:
		return "MEDIA"
	case TypeEnd:
		return "END"
	}
	return "type " + strconv.Itoa(int(typ))
}
