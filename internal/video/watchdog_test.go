package video

import (
	"errors"
	"testing"
	"time"
)

// hangLimit grows with the work a call holds; a test's hangTimeout
// replaces it.
func TestHangLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		o    *outputFile
		want time.Duration
	}{
		{"small frames, nothing held", &outputFile{spec: encoderSpec{width: 64, height: 64}}, hangFloor + 4096*time.Microsecond},
		{"1080p, 31 frames held", &outputFile{spec: encoderSpec{width: 1920, height: 1080}, sent: 31}, hangFloor + 32*2073600*time.Microsecond},
		{"held less returned", &outputFile{spec: encoderSpec{width: 1000, height: 1000}, sent: 40, packets: 38}, hangFloor + 3*time.Second},
		{"test timeout", &outputFile{spec: encoderSpec{width: 1920, height: 1080, hangTimeout: 50 * time.Millisecond}, sent: 31}, 50 * time.Millisecond},
	} {
		if got := c.o.hangLimit(); got != c.want {
			t.Errorf("%s: hangLimit %v, want %v", c.name, got, c.want)
		}
	}
}

// The watchdog bounds the time between packets, not a call: a long call
// that keeps yielding packets is not hung; one that goes quiet is.
func TestCallWatchdogCountsPackets(t *testing.T) {
	const limit = 100 * time.Millisecond
	o := &outputFile{path: "cam.mp4", spec: encoderSpec{encoder: "test", hangTimeout: limit}}
	start := time.Now()
	err := o.call(func() error {
		for range 6 {
			time.Sleep(limit / 2)
			o.progress.Store(time.Now().UnixNano())
		}
		return nil
	})
	if err != nil || o.hung {
		t.Fatalf("a call yielding a packet every %v, %v long in all: %v (hung %v)", limit/2, time.Since(start).Round(time.Millisecond), err, o.hung)
	}
	release := make(chan struct{})
	defer close(release)
	quiet := &outputFile{path: "cam.mp4", spec: encoderSpec{encoder: "test", hangTimeout: limit}}
	start = time.Now()
	err = quiet.call(func() error { <-release; return nil })
	if !errors.Is(err, ErrEncoderHung) || !quiet.hung {
		t.Fatalf("a call yielding nothing: %v (hung %v), want ErrEncoderHung", err, quiet.hung)
	}
	if took := time.Since(start); took < limit || took > 20*limit {
		t.Errorf("the quiet call was given up after %v, want about %v", took, limit)
	}
}
