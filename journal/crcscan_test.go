package journal

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ceres-robotics/ceres-export/internal/testenv"
)

// naiveFindValid is the definition FindValid implements: check every offset
// directly.
func naiveFindValid(data []byte, from int64) (int64, bool) {
	fr := NewFrameReader(bytes.NewReader(data), 0, int64(len(data)))
	for off := from; off <= int64(len(data))-FrameHeaderSize; off++ {
		if _, _, err := fr.check(off); err == nil {
			return off, true
		}
	}
	return 0, false
}

// TestRangeCRC checks the CRC identity crcScanner relies on against
// hash/crc32 for many ranges.
func TestRangeCRC(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	var sc crcScanner
	sc.buf = data
	var crc uint32
	for k := 0; ; k += crcCheckpoint {
		sc.ckpt = append(sc.ckpt, crc)
		if k+crcCheckpoint > len(data) {
			break
		}
		crc = crc32.Update(crc, castagnoli, data[k:k+crcCheckpoint])
	}
	for range 2000 {
		a := rng.IntN(len(data))
		b := a + rng.IntN(len(data)-a+1)
		if got, want := sc.rangeCRC(a, b), crc32.Checksum(data[a:b], castagnoli); got != want {
			t.Fatalf("crc of [%d, %d) = %08x, want %08x", a, b, got, want)
		}
	}
}

// TestFindValidMatchesNaive compares FindValid with the direct definition on
// random bytes with planted frames, including frames planted inside other
// frames' claimed lengths and small plausible lengths everywhere.
func TestFindValidMatchesNaive(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 300 {
		data := make([]byte, 50+rng.IntN(3000))
		for i := range data {
			switch rng.IntN(3) {
			case 0:
				data[i] = 0
			default:
				data[i] = byte(rng.Uint32())
			}
		}
		for range rng.IntN(4) {
			f := frame(uint8(1+rng.IntN(255)), data[:rng.IntN(min(len(data), 200))])
			if at := rng.IntN(len(data)); at+len(f) <= len(data) {
				copy(data[at:], f)
			}
		}
		from := int64(rng.IntN(len(data)))
		fr := NewFrameReader(bytes.NewReader(data), 0, int64(len(data)))
		got, gotOK, err := fr.FindValid(from)
		if err != nil {
			t.Fatal(err)
		}
		want, wantOK := naiveFindValid(data, from)
		if got != want || gotOK != wantOK {
			t.Fatalf("iteration %d: FindValid(%d) = %d %v, want %d %v", iter, from, got, gotOK, want, wantOK)
		}
	}
}

// TestFindValidCostIndependentOfLengths scans 8 MiB of int32 counters, where
// every fourth offset reads as a plausible small length: a direct CRC per
// candidate would take minutes.
func TestFindValidCostIndependentOfLengths(t *testing.T) {
	t.Parallel()
	testenv.Short(t, "an 8 MiB scan")
	data := make([]byte, 8<<20)
	for i := 0; i+4 <= len(data); i += 4 {
		binary.LittleEndian.PutUint32(data[i:], uint32(i/4)%60000+1)
	}
	fr := NewFrameReader(bytes.NewReader(data), 0, int64(len(data)))
	start := time.Now()
	_, found, err := fr.FindValid(0)
	if err != nil || found {
		t.Fatalf("FindValid = %v %v", found, err)
	}
	t.Logf("scanned 8 MiB in %v", time.Since(start))
}

// TestIsTornTail checks the acceptable-end predicate on a bare FrameReader.
func TestIsTornTail(t *testing.T) {
	t.Parallel()
	ok := frame(TypeEvent, []byte(`{"t":1,"kind":"run_start"}`))
	for _, c := range []struct {
		name string
		data []byte
		torn bool
	}{
		{"zeros after the last frame", cat(ok, make([]byte, 64)), true},
		{"cut frame", cat(ok, ok[:20]), true},
		{"bad frame then a valid one", cat(ok, frame(0, nil), ok), false},
	} {
		fr := NewFrameReader(bytes.NewReader(c.data), 0, int64(len(c.data)))
		if _, _, err := fr.Next(); err != nil {
			t.Fatal(err)
		}
		_, _, err := fr.Next()
		if fr.Offset() != int64(len(ok)) {
			t.Errorf("%s: Offset %d after the error, want %d", c.name, fr.Offset(), len(ok))
		}
		if _, _, again := fr.Next(); again != err {
			t.Errorf("%s: error not sticky: %v then %v", c.name, err, again)
		}
		torn, terr := isTornTail(fr, err)
		if terr != nil || torn != c.torn {
			t.Errorf("%s: isTornTail = %v %v, want %v", c.name, torn, terr, c.torn)
		}
	}
}
