package campaign

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Attempts started side by side take distinct fencing tokens that grow
// with each task's attempt numbers; only the greatest token of a task
// passes its fence.
func TestFencingTokens(t *testing.T) {
	out := t.TempDir()
	const tasks, attempts = 3, 8
	var wg sync.WaitGroup
	errs := make(chan error, tasks*attempts)
	for i := range tasks * attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &Record{RecordVersion: RecordVersion, TaskID: fmt.Sprintf("t%d", i%tasks), State: StateRunning}
			errs <- CreateRecord(out, r)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[int64]bool{}
	for i := range tasks {
		id := fmt.Sprintf("t%d", i)
		recs, err := ReadRecords(out, id)
		if err != nil || len(recs) != attempts {
			t.Fatalf("task %s: %d records, %v", id, len(recs), err)
		}
		for j, r := range recs {
			if r.FencingToken < 1 || seen[r.FencingToken] {
				t.Fatalf("task %s attempt %d: token %d (zero or taken twice)", id, r.AttemptNo, r.FencingToken)
			}
			seen[r.FencingToken] = true
			if j > 0 && r.FencingToken <= recs[j-1].FencingToken {
				t.Fatalf("task %s: attempt %d has token %d, not above attempt %d's %d", id, r.AttemptNo, r.FencingToken, recs[j-1].AttemptNo, recs[j-1].FencingToken)
			}
			err := CheckFence(out, id, r.FencingToken)
			if last := j == len(recs)-1; last != (err == nil) {
				t.Fatalf("task %s attempt %d of %d: fence %v", id, r.AttemptNo, len(recs), err)
			}
			if err != nil && !errors.Is(err, ErrSuperseded) {
				t.Fatalf("fence error %v is not ErrSuperseded", err)
			}
		}
	}
}
