package merge

import (
	"context"
	"fmt"
)

// intoSeal is the check of the seal of the dataset an append goes into.
// It runs while the append is built (hashing every byte of that dataset
// was the most of an append that grew with it, and the build reads none
// of the dataset's rows or video): the append is committed only once the
// seal is found to hold. When it does not, what was built is thrown away
// and the append made again with the seal known not to hold, that is with
// the dataset verified in full before anything is written, as an append
// always did (verifySource).
type intoSeal struct {
	done  chan struct{}
	known bool // the result was known before the append began
	holds bool
	why   error
}

// checkIntoSeal starts checking the seal of dir.
func checkIntoSeal(ctx context.Context, dir string, sums *fileSums) *intoSeal {
	s := &intoSeal{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.holds, s.why = sealHolds(ctx, dir, sums)
	}()
	return s
}

// wait returns the result of the check.
func (s *intoSeal) wait() (bool, error) {
	<-s.done
	return s.holds, s.why
}

// trusted says whether the append may go on as if the seal held: it does,
// or it is still being checked (and the append is made again if not).
func (s *intoSeal) trusted() bool {
	if !s.known {
		return true
	}
	return s.holds
}

// errIntoUnsealed ends an append built while the seal of the dataset it
// goes into was checked, and found not to hold.
type errIntoUnsealed struct{ seal *intoSeal }

func (e *errIntoUnsealed) Error() string {
	return fmt.Sprintf("merge: the seal of the dataset appended to does not hold: %v", e.seal.why)
}

// again is the check's result, known, for the append made again.
func (e *errIntoUnsealed) again() *intoSeal {
	return &intoSeal{done: e.seal.done, known: true, holds: e.seal.holds, why: e.seal.why}
}
