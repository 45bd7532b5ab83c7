package merge

import (
	"encoding/hex"
	"io/fs"
	"sync"

	"github.com/ceres-robotics/ceres-export/internal/input"
)

// fileSums remembers, for one merge, the SHA-256 of the files it hashed by
// their identity (device, inode, size, modification time). An append
// links most of the dataset appended to into the new one: the new seal
// covers those files, which checking the old seal has just hashed. Nothing
// writes into a dataset's files (staging files are only ever created), so
// a file of the same identity holds the same bytes. A nil *fileSums hashes
// every time. A merge of a thousand shards remembers twelve thousand
// files: each sum is kept as its 32 bytes, not as 64 hex digits.
type fileSums struct {
	mu  sync.Mutex
	sum map[fileID][32]byte
}

func newFileSums() *fileSums { return &fileSums{sum: map[fileID][32]byte{}} }

// sha256 returns the SHA-256 of the file at path, whose entry info is.
func (s *fileSums) sha256(path string, info fs.FileInfo) (string, error) {
	id, ok := identify(info)
	if s != nil && ok {
		s.mu.Lock()
		sum, hit := s.sum[id]
		s.mu.Unlock()
		if hit {
			return hex.EncodeToString(sum[:]), nil
		}
	}
	sum, _, err := input.SHA256(path)
	if err != nil {
		return "", err
	}
	var raw [32]byte
	if n, err := hex.Decode(raw[:], []byte(sum)); s != nil && ok && err == nil && n == len(raw) {
		s.mu.Lock()
		s.sum[id] = raw
		s.mu.Unlock()
	}
	return sum, nil
}
