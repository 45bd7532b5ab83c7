package video

import "strconv"

// codecOptions builds the avcodec_open2 dictionary the way LeRobot's
// get_codec_options does, plus bf=0 and cpu-independent=1 for x264 (no
// B-frames: LeRobot needs pts = dts so that no composition offsets shift
// frame times; the same bytes on every CPU) and
// hierarchical-levels=4 in SVT-AV1's svtav1-params.
func codecOptions(o EncoderOptions) map[string]string {
	m := map[string]string{
		"g":   strconv.Itoa(o.G),
		"crf": strconv.Itoa(o.CRF),
	}
	switch o.Codec {
	case EncoderSVTAV1:
		m["preset"] = o.Preset
		// Four hierarchical levels (mini-GOPs of 16 frames), as FFmpeg
		// 5.1's wrapper always asked of SVT-AV1 and every export before
		// FFmpeg 7.1 was made: 7.1's wrapper leaves SVT-AV1's own default,
		// 5 (mini-GOPs of 32), which codes the same frames into other
		// packets and raises an export's peak memory. Asked for here, an
		// export's AV1 packets stay those FFmpeg 5.1 made
		// (TestAV1BytesStable).
		p := "fast-decode=" + strconv.Itoa(o.FastDecode) + ":hierarchical-levels=4"
		if o.Threads > 0 {
			p += ":lp=" + strconv.Itoa(o.Threads)
		}
		m["svtav1-params"] = p
	case EncoderX264:
		m["preset"] = o.Preset
		m["bf"] = "0"
		if o.FastDecode > 0 {
			m["tune"] = "fastdecode"
		}
		m["x264-params"] = x264CPUIndependent
	}
	for k, v := range o.ExtraOptions {
		if k == "x264-params" && o.Codec == EncoderX264 {
			// x264 reads its params in order: the user's come after
			// ours, so that they may still override ours.
			v = x264CPUIndependent + ":" + v
		}
		m[k] = v
	}
	return m
}

// x264CPUIndependent makes x264 decide the same on every CPU: without it
// x264 picks intra-mode search routines by the CPU it runs on (amd64's
// SSSE3 and later), whose tie-breaks differ from its C code, which arm64's
// build matches; the same session then gave other H.264 bytes on each
// release binary. What it turns off costs no measurable time.
const x264CPUIndependent = "cpu-independent=1"
