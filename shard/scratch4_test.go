package shard

import (
	"fmt"
	"path/filepath"
	"testing"
)

func BenchmarkOursOnly(b *testing.B) {
	d := makeBenchData()
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeRowsStage(b, filepath.Join(dir, fmt.Sprintf("ours-%d", i)), d)
	}
}

func BenchmarkBuilderOnly(b *testing.B) {
	d := makeBenchData()
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeBuilderStage(b, filepath.Join(dir, fmt.Sprintf("b-%d", i)), d)
	}
}
