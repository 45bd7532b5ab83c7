package lerobot

import "github.com/ceres-robotics/ceres-export/journal"

// Dtype is a feature's dtype as info.json states it: a numpy name for
// numeric features (the same names, sizes and little-endian encodings as
// the journal's field dtypes), "string", or "video"/"image" for visual
// features, whose frames live outside the data files.
type Dtype string

// The dtypes LeRobot features have.
const (
	Float32       = Dtype(journal.DtypeFloat32)
	Float64       = Dtype(journal.DtypeFloat64)
	Int32         = Dtype(journal.DtypeInt32)
	Int64         = Dtype(journal.DtypeInt64)
	Uint8         = Dtype(journal.DtypeUint8)
	Bool          = Dtype(journal.DtypeBool)
	String  Dtype = "string"
	Video   Dtype = "video"
	Image   Dtype = "image"
)

// Size returns the byte size of one element of a numeric dtype (bool
// included), 0 for string, video and image.
func (d Dtype) Size() int { return journal.Dtype(d).Size() }

// Numeric reports whether d is one of the fixed-size numeric dtypes (bool
// included).
func (d Dtype) Numeric() bool { return d.Size() != 0 }

// Integer reports whether d is an integer dtype (int32, int64, uint8): its
// statistics keep integer min and max, and pandas metadata calls it int64.
func (d Dtype) Integer() bool { return d == Int32 || d == Int64 || d == Uint8 }

// Visual reports whether d is video or image: such a feature has no data
// column.
func (d Dtype) Visual() bool { return d == Video || d == Image }

// Float64 returns element e of little-endian values of numeric dtype d in
// raw, converted to float64 (bool as 0 or 1); NaN for other dtypes.
func (d Dtype) Float64(raw []byte, e int) float64 { return journal.Dtype(d).Float64(raw, e) }

// FromJournal is the feature dtype that holds a journal field's values
// unchanged.
func FromJournal(d journal.Dtype) Dtype { return Dtype(d) }
