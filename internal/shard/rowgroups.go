package shard

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// parquetMagic opens and closes every Parquet file.
const parquetMagic = "PAR1"

// dataFile writes one data file, one row group per episode, with the bytes
// parquet-go's writer would give the same row groups written into one
// file, without its memory: that writer keeps every row group's metadata
// (about 9 KB an episode of 11 columns) until its footer, so a data file
// of a merge of a thousand shards held 39 MB for its 4,000 row groups.
// Here each row group is written by parquet-go as a file of its own in
// memory; its column chunks are copied into the data file and its
// metadata, moved to where the chunks now stand, goes encoded to a
// temporary file beside the data file, which the footer is written from.
type dataFile struct {
	f      *os.File
	out    *bufio.Writer
	offset int64 // bytes of f written

	rows      int64
	rowGroups int

	pw    *parquet.GenericWriter[any] // writes one row group into buf
	wopts []parquet.WriterOption
	buf   bytes.Buffer

	// template is the first row group's file metadata without its row
	// groups: schema, key-value metadata, created_by and column orders
	// are the same for every row group.
	template *format.FileMetaData

	spillPath string
	spill     *os.File
	spillOut  *bufio.Writer
	rg        format.RowGroup // decoded and encoded again for each row group
	md        format.FileMetaData
	oi        format.OffsetIndex
}

// newDataFile creates path (it must not exist) and its spill file.
func newDataFile(path string, wopts []parquet.WriterOption) (*dataFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	// The spill file lies in the staging directory with the data file, so
	// that a killed run leaves it nowhere else; it is removed with the
	// writer.
	spill, err := os.CreateTemp(filepath.Dir(path), ".rowgroups-*.tmp")
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	d := &dataFile{f: f, out: bufio.NewWriterSize(f, 1<<16), spill: spill, spillPath: spill.Name(), spillOut: bufio.NewWriterSize(spill, 1<<16)}
	d.wopts = wopts
	d.pw = parquet.NewGenericWriter[any](&d.buf, wopts...)
	if _, err := d.out.WriteString(parquetMagic); err != nil {
		d.abort()
		return nil, err
	}
	d.offset = int64(len(parquetMagic))
	return d, nil
}

// Name is the data file's path.
func (d *dataFile) Name() string { return d.f.Name() }

// Size is the size of the file so far, as parquet-go's Writer.Size gives it
// after a row group is flushed: LeRobot's rotation rule reads it.
func (d *dataFile) Size() int64 { return d.offset }

// ColumnWriters are the column writers of the next row group.
func (d *dataFile) ColumnWriters() []*parquet.ColumnWriter { return d.pw.ColumnWriters() }

// FlushRowGroup ends the row group written through ColumnWriters: its
// chunks go to the file, its metadata to the spill file.
func (d *dataFile) FlushRowGroup() error {
	if err := d.pw.Close(); err != nil {
		return err
	}
	small := d.buf.Bytes()
	d.md = format.FileMetaData{}
	footer, err := parquetFooter(small)
	if err != nil {
		return fmt.Errorf("row group %d: %w", d.rowGroups, err)
	}
	// The decoder's strings point into what it decodes, and the template
	// outlives this row group's bytes.
	footer = bytes.Clone(footer)
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, &d.md); err != nil {
		return fmt.Errorf("row group %d: footer: %w", d.rowGroups, err)
	}
	if len(d.md.RowGroups) != 1 {
		return fmt.Errorf("row group %d: parquet-go wrote %d row groups", d.rowGroups, len(d.md.RowGroups))
	}
	rg := &d.md.RowGroups[0]
	if d.template == nil {
		t := d.md
		t.RowGroups = nil
		d.template = &t
	}
	// The chunks lie between the magic and the page index (column indexes,
	// then offset indexes), which the footer follows.
	chunksEnd := int64(len(small)) - int64(len(footer)) - 8
	for _, c := range rg.Columns {
		if c.ColumnIndexLength > 0 {
			chunksEnd = min(chunksEnd, c.ColumnIndexOffset)
		}
		if c.OffsetIndexLength > 0 {
			chunksEnd = min(chunksEnd, c.OffsetIndexOffset)
		}
	}
	delta := d.offset - int64(len(parquetMagic))
	if _, err := d.out.Write(small[len(parquetMagic):chunksEnd]); err != nil {
		return err
	}
	d.offset += chunksEnd - int64(len(parquetMagic))

	// The spill record: the row group, then each column's column index and
	// offset index, each length-prefixed.
	shift := func(off int64) int64 {
		if off == 0 {
			return 0
		}
		return off + delta
	}
	type index struct{ ci, oi []byte }
	indexes := make([]index, len(rg.Columns))
	for i := range rg.Columns {
		c := &rg.Columns[i]
		if c.ColumnIndexOffset < 0 || c.ColumnIndexOffset+int64(c.ColumnIndexLength) > int64(len(small)) ||
			c.OffsetIndexOffset < 0 || c.OffsetIndexOffset+int64(c.OffsetIndexLength) > int64(len(small)) {
			return fmt.Errorf("row group %d column %d: page index out of the file", d.rowGroups, i)
		}
		indexes[i].ci = small[c.ColumnIndexOffset : c.ColumnIndexOffset+int64(c.ColumnIndexLength)]
		d.oi = format.OffsetIndex{}
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), small[c.OffsetIndexOffset:c.OffsetIndexOffset+int64(c.OffsetIndexLength)], &d.oi); err != nil {
			return fmt.Errorf("row group %d column %d: offset index: %w", d.rowGroups, i, err)
		}
		for j := range d.oi.PageLocations {
			d.oi.PageLocations[j].Offset = shift(d.oi.PageLocations[j].Offset)
		}
		if indexes[i].oi, err = thrift.Marshal(new(thrift.CompactProtocol), &d.oi); err != nil {
			return err
		}
		c.FileOffset = shift(c.FileOffset)
		c.MetaData.DataPageOffset = shift(c.MetaData.DataPageOffset)
		c.MetaData.DictionaryPageOffset = shift(c.MetaData.DictionaryPageOffset)
		c.MetaData.IndexPageOffset = shift(c.MetaData.IndexPageOffset)
		c.MetaData.BloomFilterOffset = shift(c.MetaData.BloomFilterOffset)
		// Set again when the footer is written, where the page index lands.
		c.ColumnIndexOffset, c.OffsetIndexOffset = 0, 0
		c.ColumnIndexLength, c.OffsetIndexLength = int32(len(indexes[i].ci)), int32(len(indexes[i].oi))
	}
	rg.FileOffset = shift(rg.FileOffset)
	rg.Ordinal = int16(d.rowGroups)
	enc, err := thrift.Marshal(new(thrift.CompactProtocol), rg)
	if err != nil {
		return err
	}
	if err := d.spillRecord(enc); err != nil {
		return err
	}
	for _, ix := range indexes {
		if err := d.spillRecord(ix.ci); err != nil {
			return err
		}
		if err := d.spillRecord(ix.oi); err != nil {
			return err
		}
	}
	d.rows += rg.NumRows
	d.rowGroups++
	d.buf.Reset()
	// A new writer for each row group: parquet-go's Reset clears the
	// column paths its next row groups would share with the last one.
	d.pw = parquet.NewGenericWriter[any](&d.buf, d.wopts...)
	return nil
}

func (d *dataFile) spillRecord(b []byte) error {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := d.spillOut.Write(n[:]); err != nil {
		return err
	}
	_, err := d.spillOut.Write(b)
	return err
}

// Close writes the page index and the footer as parquet-go's writer
// does (writeFileFooter: every column index, then every offset index,
// then the file metadata) and closes the file, unsynced, and the spill
// file, removed. The caller syncs the file.
func (d *dataFile) Close() error {
	err := d.finish()
	d.removeSpill()
	if err != nil {
		return err
	}
	return d.out.Flush()
}

func (d *dataFile) finish() error {
	if d.template == nil {
		return errors.New("a data file without row groups")
	}
	if err := d.spillOut.Flush(); err != nil {
		return err
	}
	// The column indexes, then the offset indexes, in row group order.
	indexStart := d.offset
	var ciTotal int64
	for pass := range 2 {
		err := d.readSpill(func(_ []byte, indexes [][]byte) error {
			for i := pass; i < len(indexes); i += 2 {
				if err := d.write(indexes[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if pass == 0 {
			ciTotal = d.offset - indexStart
		}
	}
	// The footer: the file metadata, its row groups encoded one at a time
	// between the bytes before and after their list, each pointing at its
	// page index.
	md := *d.template
	md.NumRows = d.rows
	before, after, err := splitRowGroupList(&md)
	if err != nil {
		return err
	}
	footerStart := d.offset
	if err := d.write(before); err != nil {
		return err
	}
	if err := d.write(compactListHeader(d.rowGroups, byte(thrift.STRUCT))); err != nil {
		return err
	}
	ciAt, oiAt := indexStart, indexStart+ciTotal
	err = d.readSpill(func(enc []byte, indexes [][]byte) error {
		d.rg = format.RowGroup{}
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), enc, &d.rg); err != nil {
			return fmt.Errorf("spilled row group: %w", err)
		}
		if len(d.rg.Columns)*2 != len(indexes) {
			return fmt.Errorf("spilled row group: %d columns, %d page indexes", len(d.rg.Columns), len(indexes))
		}
		for j := range d.rg.Columns {
			c := &d.rg.Columns[j]
			c.ColumnIndexOffset, c.ColumnIndexLength = ciAt, int32(len(indexes[2*j]))
			ciAt += int64(len(indexes[2*j]))
			c.OffsetIndexOffset, c.OffsetIndexLength = oiAt, int32(len(indexes[2*j+1]))
			oiAt += int64(len(indexes[2*j+1]))
		}
		b, err := thrift.Marshal(new(thrift.CompactProtocol), &d.rg)
		if err != nil {
			return err
		}
		return d.write(b)
	})
	if err != nil {
		return err
	}
	if err := d.write(after); err != nil {
		return err
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(d.offset-footerStart))
	copy(tail[4:], parquetMagic)
	return d.write(tail[:])
}

func (d *dataFile) write(b []byte) error {
	_, err := d.out.Write(b)
	d.offset += int64(len(b))
	return err
}

// readSpill calls fn with each spilled row group and its page indexes
// (column index, offset index, for each column), in order.
func (d *dataFile) readSpill(fn func(rg []byte, indexes [][]byte) error) error {
	if _, err := d.spill.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(d.spill, 1<<16)
	var rg []byte
	var indexes [][]byte
	var ncols int
	read := func(into []byte) ([]byte, error) {
		var n [4]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return nil, err
		}
		size := int(binary.LittleEndian.Uint32(n[:]))
		if cap(into) < size {
			into = make([]byte, size)
		}
		into = into[:size]
		_, err := io.ReadFull(r, into)
		return into, err
	}
	for g := 0; g < d.rowGroups; g++ {
		var err error
		if rg, err = read(rg); err != nil {
			return fmt.Errorf("%s: row group %d: %w", d.spillPath, g, err)
		}
		if ncols == 0 {
			d.rg = format.RowGroup{}
			if err := thrift.Unmarshal(new(thrift.CompactProtocol), rg, &d.rg); err != nil {
				return fmt.Errorf("%s: row group %d: %w", d.spillPath, g, err)
			}
			ncols = len(d.rg.Columns)
			indexes = make([][]byte, 2*ncols)
		}
		for i := range indexes {
			if indexes[i], err = read(indexes[i]); err != nil {
				return fmt.Errorf("%s: row group %d: %w", d.spillPath, g, err)
			}
		}
		if err := fn(rg, indexes); err != nil {
			return err
		}
	}
	return nil
}

// abort closes and removes what was written.
func (d *dataFile) abort() {
	d.removeSpill()
	_ = d.f.Close()
	_ = os.Remove(d.f.Name())
}

func (d *dataFile) removeSpill() {
	if d.spill != nil {
		_ = d.spill.Close()
		_ = os.Remove(d.spillPath)
		d.spill = nil
	}
}

// parquetFooter returns the encoded file metadata of the Parquet file b.
func parquetFooter(b []byte) ([]byte, error) {
	if len(b) < 2*len(parquetMagic)+4 || string(b[len(b)-4:]) != parquetMagic {
		return nil, errors.New("parquet-go wrote no Parquet file")
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > len(b)-2*len(parquetMagic)-4 {
		return nil, fmt.Errorf("footer of %d bytes in %d", n, len(b))
	}
	return b[len(b)-8-n : len(b)-8], nil
}

// splitRowGroupList encodes md around its row groups: the bytes before the
// list header of field 4 (row_groups) and those after its last element,
// so that the row groups can be encoded one at a time between them. It is
// found by encoding md with one and with two empty row groups: they agree
// up to the list header.
func splitRowGroupList(md *format.FileMetaData) (before, after []byte, err error) {
	p := new(thrift.CompactProtocol)
	one, two := *md, *md
	one.RowGroups = []format.RowGroup{{}}
	two.RowGroups = []format.RowGroup{{}, {}}
	b1, err := thrift.Marshal(p, &one)
	if err != nil {
		return nil, nil, err
	}
	b2, err := thrift.Marshal(p, &two)
	if err != nil {
		return nil, nil, err
	}
	elem, err := thrift.Marshal(p, &format.RowGroup{})
	if err != nil {
		return nil, nil, err
	}
	n := 0
	for n < len(b1) && n < len(b2) && b1[n] == b2[n] {
		n++
	}
	h1, h2 := compactListHeader(1, byte(thrift.STRUCT)), compactListHeader(2, byte(thrift.STRUCT))
	rest := b1[n:]
	if !bytes.HasPrefix(rest, h1) || !bytes.HasPrefix(rest[len(h1):], elem) ||
		!bytes.Equal(b2[n:], bytes.Join([][]byte{h2, elem, elem, rest[len(h1)+len(elem):]}, nil)) {
		return nil, nil, errors.New("the file metadata's row groups are not where they were expected in its encoding")
	}
	return b1[:n], rest[len(h1)+len(elem):], nil
}

// compactListHeader is the Thrift compact protocol's list header of n
// elements of type elem.
func compactListHeader(n int, elem byte) []byte {
	if n <= 14 {
		return []byte{byte(n<<4) | elem}
	}
	return binary.AppendUvarint([]byte{0xF0 | elem}, uint64(n))
}
