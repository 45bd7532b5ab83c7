package taskspec

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"testing"

	"github.com/gowebpki/jcs"
)

// BenchmarkParseAndHash measures Parse, Canonical and Hash on the
// contract's example and reports the time relative to a reference measured
// in the same run: encoding/json into any, the jcs library's canonicaliser
// and SHA-256 (which validates nothing). Metric: ratio_vs_reference.
func BenchmarkParseAndHash(b *testing.B) {
	data, err := os.ReadFile("testdata/example.json")
	if err != nil {
		b.Fatal(err)
	}
	reference := testing.Benchmark(func(b *testing.B) {
		for b.Loop() {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
			canon, err := jcs.Transform(data)
			if err != nil {
				b.Fatal(err)
			}
			sha256.Sum256(canon)
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Hash()
	}
	if ref := reference.NsPerOp(); ref > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ref), "ratio_vs_reference")
	}
}
