package session

import "testing"

func TestParseFlags(t *testing.T) {
	if c, err := ParseCodec("h264"); err != nil || c != "h264" {
		t.Errorf("ParseCodec(h264) = %q, %v", c, err)
	}
	if _, err := ParseCodec("hevc"); err == nil {
		t.Error("ParseCodec(hevc): no error")
	}
	if err := CheckScene("natural"); err != nil {
		t.Errorf("CheckScene(natural): %v", err)
	}
	if err := CheckScene("night"); err == nil {
		t.Error("CheckScene(night): no error")
	}
	f, err := ParseFaults([]string{"crash", " restart"})
	if err != nil || !f.Crash || !f.Restart || f.Corrupt || f.CutCamera {
		t.Errorf("ParseFaults(crash, restart) = %+v, %v", f, err)
	}
	if _, err := ParseFaults([]string{"fire"}); err == nil {
		t.Error("ParseFaults(fire): no error")
	}
}
