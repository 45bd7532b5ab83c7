package taskspec

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
)

// BenchmarkParseAndHash measures Parse and Hash on the contract's example
// and reports the time relative to a reference run for the same number of
// iterations: encoding/json into any, the jcs library's canonicaliser and
// SHA-256, which together validate nothing of the contract.
func BenchmarkParseAndHash(b *testing.B) {
	data, err := os.ReadFile("testdata/example.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Hash()
	}
	b.StopTimer()
	ours := b.Elapsed()

	start := time.Now()
	for i := 0; i < b.N; i++ {
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
	if ref := time.Since(start); ref > 0 {
		b.ReportMetric(float64(ours)/float64(ref), "ratio_vs_reference")
	}
}
