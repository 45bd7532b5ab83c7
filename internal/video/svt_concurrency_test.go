package video

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/asticode/go-astiav"
)

// Campaign tasks export in one process two at a time, each camera opening
// and closing an SVT-AV1 encoder per episode. SVT-AV1 1.4 shares one
// process-wide table between its encoders' init and deinit (see
// svtLifecycle): without the lock this test aborts the process ("double
// free or corruption", or a SIGSEGV in avcodec_open2) within its first
// rounds on two cores.
func TestSVTEncodersOpenAndCloseConcurrently(t *testing.T) {
	spec := encoderSpec{
		encoder: EncoderSVTAV1, format: "mp4", width: 64, height: 64,
		timeBase: astiav.NewRational(1, 30), frameRate: astiav.NewRational(30, 1),
		options: mustCodecOptions(t, EncoderOptions{}), packetDuration: 1,
	}
	dir := t.TempDir()
	const workers, rounds = 4, 60
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				path := filepath.Join(dir, fmt.Sprintf("%d-%d.mp4", w, r))
				o, err := openOutput(path, spec)
				if err != nil {
					errs <- err
					return
				}
				// Every other round encodes a frame and finishes the file,
				// the rest are freed as a failed export frees them.
				if r%2 == 0 {
					if !o.sendBlack() {
						errs <- fmt.Errorf("%s: black frame refused: %v", path, o.err)
					}
					if err := o.finish(); err != nil {
						errs <- err
					}
					continue
				}
				o.free()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
