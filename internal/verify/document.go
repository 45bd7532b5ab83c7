package verify

import (
	"fmt"
	"io"
)

// Document is `ceres-export verify --json`'s one document.
type Document struct {
	Dir   string `json:"dir"`
	Sound bool   `json:"sound"`
	// Error says why the shard could not be read; it has no findings then.
	Error    string         `json:"error,omitempty"`
	Checks   []string       `json:"checks"`
	Counts   map[string]int `json:"counts"`
	Findings []Finding      `json:"findings"`
}

// UnreadableDocument is the Document of a shard at dir that could not be
// read (ErrUnreadable).
func UnreadableDocument(dir string, err error) Document {
	return Document{Dir: dir, Error: err.Error(), Checks: []string{}, Counts: map[string]int{}, Findings: []Finding{}}
}

// Counts counts the findings by severity, every severity named.
func (r *Result) Counts() map[string]int {
	return map[string]int{
		SeverityError:   r.Count(SeverityError),
		SeverityWarning: r.Count(SeverityWarning),
		SeverityNote:    r.Count(SeverityNote),
	}
}

// Document is the result as verify --json prints it.
func (r *Result) Document() Document {
	return Document{Dir: r.Dir, Sound: r.Sound, Checks: r.Checks, Counts: r.Counts(), Findings: r.Findings}
}

// WriteText writes the findings, one a line, and a line with the verdict
// and the counts: verify's text output.
func (r *Result) WriteText(w io.Writer) error {
	for _, f := range r.Findings {
		if _, err := fmt.Fprintln(w, f.String()); err != nil {
			return err
		}
	}
	verdict := "sound"
	if !r.Sound {
		verdict = "NOT SOUND"
	}
	counts := r.Counts()
	_, err := fmt.Fprintf(w, "%s: %s: %d errors, %d warnings, %d notes (checks: %v)\n",
		r.Dir, verdict, counts[SeverityError], counts[SeverityWarning], counts[SeverityNote], r.Checks)
	return err
}
