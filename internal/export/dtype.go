package export

import (
	"github.com/ceres-robotics/ceres-export/internal/lerobot"
	"github.com/ceres-robotics/ceres-export/journal"
)

// The export boundary between the journal's field dtypes and the dataset's
// feature dtypes (lerobot's table): each journal dtype maps to the feature
// dtype that holds its values unchanged, with the same size and
// little-endian encoding. A dtype the journal gains is added here and to
// lerobot's table, nowhere else.
var journalDtypes = map[journal.Dtype]lerobot.Dtype{
	journal.DtypeFloat32: lerobot.Float32,
	journal.DtypeFloat64: lerobot.Float64,
	journal.DtypeInt32:   lerobot.Int32,
	journal.DtypeInt64:   lerobot.Int64,
	journal.DtypeUint8:   lerobot.Uint8,
	journal.DtypeBool:    lerobot.Bool,
}

// featureDtype is the feature dtype that holds a journal field's values
// unchanged ("" for a dtype the journal does not define).
func featureDtype(d journal.Dtype) lerobot.Dtype { return journalDtypes[d] }
