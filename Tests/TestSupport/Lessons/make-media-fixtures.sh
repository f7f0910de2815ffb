#!/usr/bin/env bash
# make-media-fixtures.sh - build the small HLS media fixtures for MediaCore.
#
# Every fixture is written to media/<name>/ next to this script: an HLS
# playlist, its segments, and facts.json (what ffprobe/ffmpeg report about the
# source; see tools/facts.py).  Sources are ffmpeg lavfi generators (testsrc,
# testsrc2, smptebars, sine at different frequencies), so nothing is
# downloaded and every encode differs from the others.
#
# Reproducible: fixed sizes, rates, durations and bitrates, single-threaded
# encoders, -fflags/-flags +bitexact, fixed AES keys and IVs.  Running it twice
# on the same Debian 12 packages gives the same bytes (ffmpeg 5.1.x, libx264
# 0.164.3095, libx265 3.5, libmp3lame 3.100).
#
# Requirements: ffmpeg/ffprobe 5.1 (Debian 12), python3, openssl.
# HE-AAC fixtures also need fdk-aac's example encoder "aac-enc":
#   FDK_AAC_ENC=/path/to/aac-enc   an already built binary, or
#   FDK_AAC_SRC=/path/to/fdk-aac   a source tree of github.com/mstorsjo/fdk-aac,
#                                  built here with cmake into a temp folder.
# Without either, ts-heaac, ts-heaacv2 and packed-heaac are skipped.
#
# usage: ./make-media-fixtures.sh [fixture ...]     (default: all)
# Encodes run one at a time (the machine is small and shared).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MEDIA="$HERE/media"
TOOLS="$HERE/tools"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# ---------------------------------------------------------------- settings
FF=(ffmpeg -hide_banner -nostdin -loglevel error -y -filter_threads 1)
# bitexact: no encoder/muxer version strings that change between builds
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact)
# H.264: 25 fps, closed GOP, IDR every 25 frames (1 s), 2 B-frames, ~64 kb/s
X264=(-c:v libx264 -preset veryfast -pix_fmt yuv420p -b:v 64k -maxrate 96k -bufsize 96k
      -g 25 -keyint_min 25 -sc_threshold 0 -bf 2 -threads 1
      -x264-params open-gop=0:keyint=25:min-keyint=25:scenecut=0)
# HEVC: same GOP, x265 single-threaded
X265=(-c:v libx265 -preset ultrafast -pix_fmt yuv420p -b:v 64k -threads 1
      -x265-params keyint=25:min-keyint=25:scenecut=0:bframes=4:b-adapt=0:pools=1:frame-threads=1:wpp=0:log-level=error)
AAC=(-c:a aac -b:a 32k -ac 1)
# HLS: 1 s segments, VOD playlist
HLS=(-f hls -hls_time 1 -hls_playlist_type vod -hls_list_size 0)
DUR=2          # seconds of video per encode
ADUR=1.96      # seconds of audio per encode: a little under 2 s, so that the
               # AAC priming frame does not spill a 21 ms third segment
# lavfi sources
vsrc() { echo "$1=size=$2:rate=25:duration=$DUR"; }                  # vsrc testsrc 192x108
asrc() { echo "sine=frequency=$1:sample_rate=48000:duration=$ADUR"; } # asrc 440

fresh() { rm -rf "$MEDIA/$1"; mkdir -p "$MEDIA/$1"; echo "== $1" >&2; }
facts() {
  python3 "$TOOLS/facts.py" "$MEDIA/$1" --name "$1" --desc "$2" --made-with "$3" "${@:4}"
  python3 "$TOOLS/packets.py" "$MEDIA/$1"
}

# one muxed H.264+AAC TS encode -> <dir>/<prefix>%d.ts + <dir>/<prefix>.m3u8
ts_encode() { # dir prefix videosrc audiofreq [extra ffmpeg output options...]
  local d=$1 p=$2 v=$3 f=$4; shift 4
  "${FF[@]}" -f lavfi -i "$v" -f lavfi -i "$(asrc "$f")" -map 0:v -map 1:a \
    "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$@" "${HLS[@]}" \
    -hls_segment_filename "$d/$p%d.ts" "$d/$p.m3u8"
}

# ---------------------------------------------------------------- 1, 2
disc_encoders() {
  local n=disc-encoders d="$MEDIA/disc-encoders"; fresh $n
  # A: 192x108, default PIDs (PMT 0x1000, video 0x100, audio 0x101)
  ts_encode "$d" a "$(vsrc testsrc 192x108)" 440
  # B: 320x180, other PIDs (PMT 0x1200 = 4608, streams from 0x200 = 512); its
  # timestamps restart at the same origin as A's (1.4 s)
  ts_encode "$d" b "$(vsrc testsrc2 320x180)" 880 \
    -hls_segment_options "mpegts_pmt_start_pid=4608:mpegts_start_pid=512"
  python3 "$TOOLS/hls_join.py" "$d/index.m3u8" "$d/a.m3u8" "$d/b.m3u8"
  rm "$d/a.m3u8" "$d/b.m3u8"
  facts $n "Muxed TS (H.264+AAC) lesson joining two encodes with #EXT-X-DISCONTINUITY: a0-a1 192x108 default PIDs, b0-b1 320x180 with PMT PID 0x1200 and ES PIDs 0x200/0x201; timestamps restart after the discontinuity." \
    "ffmpeg hls muxer per encode (-hls_segment_options mpegts_pmt_start_pid/mpegts_start_pid for B), playlist joined by tools/hls_join.py"
}

disc_same() {
  local n=disc-same d="$MEDIA/disc-same"; fresh $n
  ts_encode "$d" a "$(vsrc testsrc 192x108)" 440
  ts_encode "$d" b "$(vsrc smptebars 192x108)" 660
  python3 "$TOOLS/hls_join.py" "$d/index.m3u8" "$d/a.m3u8" "$d/b.m3u8"
  rm "$d/a.m3u8" "$d/b.m3u8"
  facts $n "Muxed TS (H.264+AAC) lesson joining two 192x108 encodes with the same PIDs and #EXT-X-DISCONTINUITY; timestamps restart after the discontinuity." \
    "ffmpeg hls muxer per encode, playlist joined by tools/hls_join.py"
}

# A discontinuity into an encode whose audio has another sample rate and channel count:
# A is 192x108 with stereo AAC at 44.1 kHz, B 320x180 with mono AAC at 48 kHz on other PIDs
# (as when a clip from another source is inserted). 1,024 samples at 48 kHz are 940.8 ticks of
# a 44.1 kHz track, so B's frames cannot all last the same whole number of ticks.
disc_rates() {
  local n=disc-rates d="$MEDIA/disc-rates"; fresh $n
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" -f lavfi -i "sine=frequency=440:sample_rate=44100:duration=$ADUR" \
    -map 0:v -map 1:a "${X264[@]}" -c:a aac -b:a 64k -ac 2 "${BITEXACT[@]}" "${HLS[@]}" \
    -hls_segment_filename "$d/a%d.ts" "$d/a.m3u8"
  ts_encode "$d" b "$(vsrc testsrc2 320x180)" 880 \
    -hls_segment_options "mpegts_pmt_start_pid=4608:mpegts_start_pid=512"
  python3 "$TOOLS/hls_join.py" "$d/index.m3u8" "$d/a.m3u8" "$d/b.m3u8"
  rm "$d/a.m3u8" "$d/b.m3u8"
  facts $n "Muxed TS (H.264+AAC) lesson joining two encodes with #EXT-X-DISCONTINUITY: a0-a1 192x108 with stereo AAC at 44.1 kHz on the default PIDs, b0-b1 320x180 with mono AAC at 48 kHz on PMT PID 0x1200 and ES PIDs 0x200/0x201; timestamps restart after the discontinuity." \
    "ffmpeg hls muxer per encode (-hls_segment_options mpegts_pmt_start_pid/mpegts_start_pid for B), playlist joined by tools/hls_join.py"
}

# One fragmented MP4 file served as byte ranges: ffmpeg's mp4 muxer with
# frag_keyframe+empty_moov writes tfhd base_data_offset (flags 0x000001), so every sample
# offset counts from the file's start, not the segment's (ISO/IEC 14496-12 8.8.7). The playlist
# is the file's ftyp+moov as EXT-X-MAP and each moof+mdat as an EXT-X-BYTERANGE.
fmp4_base_offset() {
  local n=fmp4-base-offset d="$MEDIA/fmp4-base-offset"; fresh $n
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc2 192x108)" -f lavfi -i "$(asrc 523.25)" -map 0:v -map 1:a \
    "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" -f mp4 -movflags frag_keyframe+empty_moov "$d/lesson.mp4"
  python3 "$TOOLS/fmp4_byterange.py" "$d/lesson.mp4" "$d/index.m3u8"
  facts $n "One fragmented MP4 file (H.264+AAC muxed, a fragment per second) served as byte ranges: EXT-X-MAP is its ftyp+moov, each EXT-X-BYTERANGE one moof+mdat, and every tfhd carries base_data_offset, counting sample offsets from the file's start." \
    "ffmpeg mp4 muxer (-movflags frag_keyframe+empty_moov), playlist by tools/fmp4_byterange.py"
}

# ---------------------------------------------------------------- 3
# ffmpeg 5.1's own master playlist has NAME="audio_1" (not the var_stream_map
# name) and lists the audio rendition again as an audio-only variant, so it is
# rewritten by tools/hls_master.py the Apple way (one video variant, the
# audio in EXT-X-MEDIA), keeping ffmpeg's BANDWIDTH/RESOLUTION/CODECS.
cmaf_common() { # name videocodec-options... (video src + 1 audio rendition; AUDIO_OPTS overrides AAC)
  local n=$1 d="$MEDIA/$1"; shift; fresh $n
  local audio=("${AAC[@]}") input=(-f lavfi -i "$(asrc 523.25)")
  if [[ -n "${AUDIO_OPTS:-}" ]]; then read -ra audio <<< "$AUDIO_OPTS"; fi
  if [[ -n "${AUDIO_IN:-}" ]]; then input=(-i "$AUDIO_IN"); fi
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc2 192x108)" "${input[@]}" -map 0:v -map 1:a \
    "$@" "${audio[@]}" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 \
    -var_stream_map "v:0,agroup:aud,name:video a:0,agroup:aud,language:en,name:audio_en" \
    -master_pl_name master.ffmpeg.m3u8 \
    -hls_segment_filename "$d/%v/seg%d.m4s" "$d/%v/index.m3u8"
  python3 "$TOOLS/hls_master.py" "$d/master.ffmpeg.m3u8" "$d/master.m3u8" video/index.m3u8 \
    --attr 'AUDIO="aud"' \
    --media "TYPE=AUDIO,GROUP-ID=\"aud\",LANGUAGE=\"en\",NAME=\"English\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"${CHANNELS:-1}\",URI=\"audio_en/index.m3u8\""
  rm "$d/master.ffmpeg.m3u8"
}
cmaf() {
  cmaf_common cmaf "${X264[@]}"
  facts cmaf "Multivariant playlist: one fMP4 H.264 video variant (video/) and a separate fMP4 AAC audio rendition (audio_en/) in EXT-X-MEDIA group \"aud\"." \
    "ffmpeg hls muxer -hls_segment_type fmp4 -var_stream_map 'v:0,agroup:aud a:0,agroup:aud,language:en'; master rewritten by tools/hls_master.py"
}
cmaf_hevc() {
  cmaf_common cmaf-hevc "${X265[@]}" -tag:v hvc1
  facts cmaf-hevc "Like cmaf but the video is HEVC (libx265, sample entry hvc1)." \
    "ffmpeg hls muxer fmp4 + libx265 -tag:v hvc1; master rewritten by tools/hls_master.py"
}

# The CMAF shape with other audio codecs in the fMP4 rendition: AC-3 and E-AC-3
# (sample entries ac-3/ec-3 with dac3/dec3, ETSI TS 102 366 Annex F), MP3 (mp4a
# with object type 0x6B) and HE-AAC v1 from fdk-aac (its ADTS copied in, so the
# esds says AAC-LC at 24 kHz and SBR is implicit, as ffmpeg writes it).
cmaf_ac3()  { AUDIO_OPTS="-c:a ac3 -b:a 96k -ac 2" CHANNELS=2 cmaf_common cmaf-ac3 "${X264[@]}"
  facts cmaf-ac3 "Like cmaf, but the fMP4 audio rendition is AC-3 stereo 96 kb/s (sample entry ac-3 with dac3)." \
    "ffmpeg hls muxer fmp4 -c:a ac3; master rewritten by tools/hls_master.py"; }
cmaf_eac3() { AUDIO_OPTS="-c:a eac3 -b:a 96k -ac 2" CHANNELS=2 cmaf_common cmaf-eac3 "${X264[@]}"
  facts cmaf-eac3 "Like cmaf, but the fMP4 audio rendition is E-AC-3 stereo 96 kb/s (sample entry ec-3 with dec3)." \
    "ffmpeg hls muxer fmp4 -c:a eac3; master rewritten by tools/hls_master.py"; }
cmaf_mp3()  { AUDIO_OPTS="-c:a libmp3lame -b:a 48k -ac 1" cmaf_common cmaf-mp3 "${X264[@]}"
  facts cmaf-mp3 "Like cmaf, but the fMP4 audio rendition is MP3 mono 48 kb/s (sample entry mp4a, esds object type 0x6B)." \
    "ffmpeg hls muxer fmp4 -c:a libmp3lame; master rewritten by tools/hls_master.py"; }
cmaf_heaac() {
  heaac_es 5 40000 523.25 659.25 "$WORK/cmaf-heaac.aac" || return 0
  AUDIO_IN="$WORK/cmaf-heaac.aac" AUDIO_OPTS="-c:a copy -bsf:a aac_adtstoasc" CHANNELS=2 cmaf_common cmaf-heaac "${X264[@]}"
  facts cmaf-heaac "Like cmaf, but the fMP4 audio rendition is HE-AAC v1 stereo 40 kb/s from fdk-aac (esds AudioSpecificConfig AAC-LC 24 kHz, SBR implicit)." \
    "fdk-aac aac-enc -t 5 -r 40000 (ADTS), ffmpeg hls muxer fmp4 -c:a copy; master rewritten by tools/hls_master.py"
}
cmaf_heaacv2() {
  heaac_es 29 32000 523.25 659.25 "$WORK/cmaf-heaacv2.aac" || return 0
  AUDIO_IN="$WORK/cmaf-heaacv2.aac" AUDIO_OPTS="-c:a copy -bsf:a aac_adtstoasc" CHANNELS=2 cmaf_common cmaf-heaacv2 "${X264[@]}"
  facts cmaf-heaacv2 "Like cmaf, but the fMP4 audio rendition is HE-AAC v2 (SBR+PS) 32 kb/s from fdk-aac (esds AudioSpecificConfig AAC-LC 24 kHz mono core, SBR and PS implicit)." \
    "fdk-aac aac-enc -t 29 -r 32000 (ADTS), ffmpeg hls muxer fmp4 -c:a copy; master rewritten by tools/hls_master.py"
}

# Separate renditions across a discontinuity: two encodes, each written as a
# video-only variant (video/) and an audio-only rendition (audio_en/), then each
# rendition's two playlists joined with #EXT-X-DISCONTINUITY by tools/hls_join.py.
# B is 320x180 after A's 192x108 and its audio another tone.  TS: B's PIDs differ
# (PMT 0x1200, streams from 0x200).  fMP4: each part has its own init section, so
# the EXT-X-MAP changes mid-playlist, and B's audio is stereo after A's mono.
renditions_part() { # dir part videosrc size audiofreq channels segment-ext extra-options...
  local d=$1 p=$2 v=$3 s=$4 f=$5 c=$6 e=$7; shift 7
  "${FF[@]}" -f lavfi -i "$(vsrc "$v" "$s")" -f lavfi -i "$(asrc "$f")" -map 0:v -map 1:a \
    "${X264[@]}" -c:a aac -b:a 32k -ac "$c" "${BITEXACT[@]}" "${HLS[@]}" "$@" \
    -var_stream_map "v:0,agroup:aud,name:video a:0,agroup:aud,language:en,name:audio_en" \
    -master_pl_name "master-$p.m3u8" -hls_segment_filename "$d/%v/$p%d.$e" "$d/%v/$p.m3u8"
}
renditions_join() { # dir channels-of-B
  local d=$1 r
  for r in video audio_en; do
    python3 "$TOOLS/hls_join.py" "$d/$r/index.m3u8" "$d/$r/a.m3u8" "$d/$r/b.m3u8"
    rm "$d/$r/a.m3u8" "$d/$r/b.m3u8"
  done
  python3 "$TOOLS/hls_master.py" "$d/master-a.m3u8" "$d/master.m3u8" video/index.m3u8 \
    --attr 'AUDIO="aud"' \
    --media "TYPE=AUDIO,GROUP-ID=\"aud\",LANGUAGE=\"en\",NAME=\"English\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"$2\",URI=\"audio_en/index.m3u8\""
  rm "$d/master-a.m3u8" "$d/master-b.m3u8"
}
ts_renditions_disc() {
  local n=ts-renditions-disc d="$MEDIA/ts-renditions-disc"; fresh $n
  renditions_part "$d" a testsrc 192x108 440 1 ts
  renditions_part "$d" b testsrc2 320x180 880 1 ts \
    -hls_segment_options "mpegts_pmt_start_pid=4608:mpegts_start_pid=512"
  renditions_join "$d" 1
  facts $n "Multivariant TS: a video-only variant (video/) and a separate AAC rendition (audio_en/), each joining two encodes with #EXT-X-DISCONTINUITY: a0-a1 192x108 with 440 Hz on the default PIDs, b0-b1 320x180 with 880 Hz on PMT 0x1200 and streams from 0x200; timestamps restart in B." \
    "ffmpeg hls muxer -var_stream_map per encode (-hls_segment_options mpegts_pmt_start_pid/mpegts_start_pid for B), each rendition's playlists joined by tools/hls_join.py, master by tools/hls_master.py"
}
cmaf_renditions_disc() {
  local n=cmaf-renditions-disc d="$MEDIA/cmaf-renditions-disc"; fresh $n
  renditions_part "$d" a testsrc 192x108 440 1 m4s -hls_segment_type fmp4 -hls_fmp4_init_filename "initA_%v.mp4"
  renditions_part "$d" b testsrc2 320x180 880 2 m4s -hls_segment_type fmp4 -hls_fmp4_init_filename "initB_%v.mp4"
  renditions_join "$d" 2
  facts $n "Multivariant fMP4 (CMAF shape): a video-only variant (video/) and a separate AAC rendition (audio_en/), each joining two encodes with #EXT-X-DISCONTINUITY and a second EXT-X-MAP: A is 192x108 with mono 440 Hz, B 320x180 with stereo 880 Hz; tfdt restarts in B." \
    "ffmpeg hls muxer -hls_segment_type fmp4 -var_stream_map per encode, each rendition's playlists joined by tools/hls_join.py, master by tools/hls_master.py"
}

# Packed audio beside video: a video-only TS variant whose first picture is at
# PTS 900000 (10 s, as Apple's segmenters write) and a packed ADTS AAC rendition
# whose ID3 PRIV timestamps start at the same 900000 (RFC 8216 3.4).
packed_beside_video() {
  local n=packed-beside-video d="$MEDIA/packed-beside-video"; fresh $n
  mkdir -p "$d/video"
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" -map 0:v "${X264[@]}" "${BITEXACT[@]}" \
    -output_ts_offset 10 -muxdelay 0 -muxpreload 0 "${HLS[@]}" \
    -master_pl_name master.ffmpeg.m3u8 -hls_segment_filename "$d/video/seg%d.ts" "$d/video/index.m3u8"
  "${FF[@]}" -f lavfi -i "$(asrc 587.33)" "${AAC[@]}" "${BITEXACT[@]}" -f adts "$WORK/$n.aac"
  python3 "$TOOLS/pack_audio.py" aac "$WORK/$n.aac" "$d/audio_en" aac --base 900000 >&2
  python3 "$TOOLS/hls_master.py" "$d/video/master.ffmpeg.m3u8" "$d/master.m3u8" video/index.m3u8 \
    --attr 'AUDIO="aud"' \
    --media 'TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="1",URI="audio_en/index.m3u8"'
  rm "$d/video/master.ffmpeg.m3u8"
  facts $n "Multivariant: a video-only TS variant (video/, first PTS 900000) and a packed-audio rendition (audio_en/: ADTS AAC-LC mono, ID3 PRIV transportStreamTimestamp per segment, first at 900000)." \
    "ffmpeg hls muxer (-an, -output_ts_offset 10 -muxdelay 0 -muxpreload 0) for the video; raw ADTS from ffmpeg cut and ID3-tagged by tools/pack_audio.py; master by tools/hls_master.py"
}

# ---------------------------------------------------------------- 4
cmaf_disc() {
  local n=cmaf-disc d="$MEDIA/cmaf-disc"; fresh $n
  # ffmpeg muxes audio and video into the same fMP4 fragments when there is
  # one variant, so each encode is one muxed fMP4 rendition with its own init
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" -f lavfi -i "$(asrc 440)" -map 0:v -map 1:a \
    "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_type fmp4 \
    -hls_fmp4_init_filename initA.mp4 -hls_segment_filename "$d/a%d.m4s" "$d/a.m3u8"
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc2 320x180)" -f lavfi -i "$(asrc 880)" -map 0:v -map 1:a \
    "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_type fmp4 \
    -hls_fmp4_init_filename initB.mp4 -hls_segment_filename "$d/b%d.m4s" "$d/b.m3u8"
  python3 "$TOOLS/hls_join.py" "$d/index.m3u8" "$d/a.m3u8" "$d/b.m3u8"
  rm "$d/a.m3u8" "$d/b.m3u8"
  facts $n "fMP4 media playlist (muxed H.264+AAC in each fragment) joining a 192x108 encode (EXT-X-MAP initA.mp4) and a 320x180 encode with #EXT-X-DISCONTINUITY and a second EXT-X-MAP (initB.mp4)." \
    "ffmpeg hls muxer -hls_segment_type fmp4 per encode, playlist joined by tools/hls_join.py"
}

# ---------------------------------------------------------------- 5
ts_audio() { # name facts-text audio-encoder-options...
  local n=$1 txt=$2 d="$MEDIA/$1"; shift 2; fresh $n
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" -f lavfi -i "$(asrc 440)" -map 0:v -map 1:a \
    "${X264[@]}" "$@" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_filename "$d/seg%d.ts" "$d/index.m3u8"
  facts $n "$txt" "ffmpeg hls muxer (MPEG-TS) with $*"
}
ts_ac3()  { ts_audio ts-ac3  "TS HLS, H.264 + AC-3 stereo 96 kb/s (see segments[].mpegts_psi for the PMT stream_type)." -c:a ac3 -b:a 96k -ac 2; }
ts_eac3() { ts_audio ts-eac3 "TS HLS, H.264 + E-AC-3 stereo 96 kb/s (see segments[].mpegts_psi for the PMT stream_type)." -c:a eac3 -b:a 96k -ac 2; }
# ts-map: ts-ac3 with its PAT and PMT moved into an EXT-X-MAP (no facts.json: its frames are ts-ac3's).
ts_map()  { python3 "$HERE/tools/ts_tables_map.py" "$MEDIA/ts-ac3" "$MEDIA/ts-map"; }
ts_mp3()  { ts_audio ts-mp3  "TS HLS, H.264 + MP3 mono 48 kb/s (see segments[].mpegts_psi for the PMT stream_type)." -c:a libmp3lame -b:a 48k -ac 1; }

# ---------------------------------------------------------------- 6
# ffmpeg 5.1's hls muxer writes MPEG-TS even for "seg%d.aac" segment names, so
# packed audio is made by tools/pack_audio.py from a raw elementary stream:
# segments cut at frame boundaries (first frame at or after each 1 s), each
# preceded by an ID3v2.4 PRIV com.apple.streaming.transportStreamTimestamp tag;
# the first sample of the lesson is at 90 kHz timestamp 900000 (10 s).
# E-AC-3 segments are named .eac3: ffmpeg 5.1.9's hls demuxer refuses .ec3
# (it checks the extension against the detected format's, even with
# -allowed_extensions ALL).
packed() { # name codec ext rawformat facts-text encoder-options...
  local n=$1 c=$2 e=$3 f=$4 txt=$5 d="$MEDIA/$1"; shift 5; fresh $n
  "${FF[@]}" -f lavfi -i "$(asrc 659.25)" "$@" "${BITEXACT[@]}" -f "$f" "$WORK/$n.$e"
  python3 "$TOOLS/pack_audio.py" "$c" "$WORK/$n.$e" "$d" "$e" --base 900000 >&2
  facts $n "$txt" "raw $f from ffmpeg ($*), cut and ID3-tagged by tools/pack_audio.py"
}
packed_aac()  { packed packed-aac  aac  aac  adts "Packed audio (RFC 8216 3.4): ADTS AAC-LC mono, ID3 PRIV transportStreamTimestamp per segment, first at 900000." -c:a aac -b:a 32k -ac 1; }
packed_mp3()  { packed packed-mp3  mp3  mp3  mp3  "Packed audio: MP3 mono 48 kb/s, ID3 PRIV transportStreamTimestamp per segment, first at 900000." -c:a libmp3lame -b:a 48k -ac 1 -write_xing 0 -id3v2_version 0; }
packed_ac3()  { packed packed-ac3  ac3  ac3  ac3  "Packed audio: AC-3 stereo 96 kb/s, ID3 PRIV transportStreamTimestamp per segment, first at 900000." -c:a ac3 -b:a 96k -ac 2; }
packed_eac3() { packed packed-eac3 eac3 eac3 eac3 "Packed audio: E-AC-3 stereo 96 kb/s (.eac3 segment names), ID3 PRIV transportStreamTimestamp per segment, first at 900000." -c:a eac3 -b:a 96k -ac 2; }

# ---------------------------------------------------------------- 7
# ffmpeg's native AAC encoder makes only AAC-LC; HE-AAC comes from fdk-aac's
# aac-enc (ADTS output, implicit SBR/PS signalling) fed with WAV from ffmpeg's
# sine source, then muxed by ffmpeg with -c:a copy.
# HE-AAC v1 is made from a STEREO source on purpose: with a mono HE-AAC ADTS
# stream (implicit signalling) ffmpeg's decoder assumes PS may follow, reports
# profile "HE-AACv2" and outputs 2 channels, which would blur v1 vs v2.
fdk_enc() {
  if [[ -n "${FDK_AAC_ENC:-}" ]]; then echo "$FDK_AAC_ENC"; return; fi
  if [[ -n "${FDK_AAC_SRC:-}" ]]; then
    if [[ ! -x "$WORK/fdk/aac-enc" ]]; then
      cmake -S "$FDK_AAC_SRC" -B "$WORK/fdk" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DBUILD_PROGRAMS=ON >/dev/null
      make -C "$WORK/fdk" -j1 aac-enc >/dev/null
    fi
    echo "$WORK/fdk/aac-enc"; return
  fi
  return 1
}
# 1.8 s of PCM: fdk-aac's HE-AAC delay and flush add about 3 frames (128 ms), so
# the ADTS stream lasts 46 x 2048 samples = 1.963 s and fits two 1 s segments
HE_WAV_DUR=1.8
stereo_wav() { # out.wav freqL freqR
  "${FF[@]}" -f lavfi -i "sine=frequency=$2:sample_rate=48000:duration=$HE_WAV_DUR" \
    -f lavfi -i "sine=frequency=$3:sample_rate=48000:duration=$HE_WAV_DUR" \
    -filter_complex '[0:a][1:a]amerge=inputs=2[a]' -map '[a]' -c:a pcm_s16le "${BITEXACT[@]}" "$1"
}
heaac_es() { # aot bitrate freqL freqR out.aac
  local enc; enc=$(fdk_enc) || { echo "HE-AAC skipped: set FDK_AAC_ENC or FDK_AAC_SRC" >&2; return 1; }
  stereo_wav "$WORK/he.wav" "$3" "$4"
  "$enc" -t "$1" -r "$2" "$WORK/he.wav" "$5" >&2
}
ts_heaac_common() { # name aot bitrate facts-text
  local n=$1 d="$MEDIA/$1"
  heaac_es "$2" "$3" 440 554.37 "$WORK/$n.aac" || return 0
  fresh $n
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" -i "$WORK/$n.aac" -map 0:v -map 1:a \
    "${X264[@]}" -c:a copy "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_filename "$d/seg%d.ts" "$d/index.m3u8"
  facts $n "$4" "fdk-aac aac-enc -t $2 -r $3 (ADTS) from a stereo WAV of two sines, muxed with ffmpeg -c:a copy into the hls muxer (MPEG-TS)"
}
ts_heaac()   { ts_heaac_common ts-heaac   5  40000 "TS HLS, H.264 + HE-AAC v1 (AOT 5, SBR, implicit signalling in ADTS) stereo 40 kb/s, 48 kHz output / 24 kHz core."; }
ts_heaacv2() { ts_heaac_common ts-heaacv2 29 32000 "TS HLS, H.264 + HE-AAC v2 (AOT 29, SBR+PS, implicit signalling in ADTS) stereo 32 kb/s, 48 kHz output / 24 kHz core, mono core + PS."; }
packed_heaac() {
  local n=packed-heaac d="$MEDIA/packed-heaac"
  heaac_es 5 40000 659.25 783.99 "$WORK/$n.aac" || return 0
  fresh $n
  python3 "$TOOLS/pack_audio.py" aac "$WORK/$n.aac" "$d" aac --base 900000 >&2
  facts $n "Packed audio: ADTS HE-AAC v1 stereo 40 kb/s (ADTS header says AAC-LC 24 kHz; SBR implicit), ID3 PRIV transportStreamTimestamp per segment, first at 900000." \
    "fdk-aac aac-enc -t 5 -r 40000, cut and ID3-tagged by tools/pack_audio.py"
}

# ---------------------------------------------------------------- 8
# x264 with open-gop=1 codes the I-frame at each keyint as a non-IDR I slice
# with a recovery point SEI, and B-frames before it in display order follow it
# in decode order (they reference the previous GOP).  libx264 does not repeat
# SPS/PPS before such I-frames, so a segment starting there would not be
# decodable on its own: the encoder is run with global headers and the
# dump_extra bsf puts SPS+PPS in front of every key frame.
ts_opengop() {
  local n=ts-opengop d="$MEDIA/ts-opengop"; fresh $n
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc2 192x108)" -f lavfi -i "$(asrc 440)" -map 0:v -map 1:a \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -b:v 64k -maxrate 96k -bufsize 96k -g 25 -bf 2 -threads 1 \
    -x264-params open-gop=1:keyint=25:min-keyint=25:scenecut=0:intra-refresh=0 \
    -flags:v +global_header -bsf:v dump_extra=freq=keyframe \
    "${AAC[@]}" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_filename "$d/seg%d.ts" "$d/index.m3u8"
  facts $n "TS HLS, H.264 open GOP (x264 open-gop=1, no intra refresh): IDR only at frame 0; the I-frame at 1 s that starts seg1 is a non-IDR I slice (NAL 1) with a recovery point SEI (payload 6), followed in decode order by B-frames that display before it." \
    "ffmpeg libx264 -x264-params open-gop=1 + -flags:v +global_header -bsf:v dump_extra=freq=keyframe, hls muxer (MPEG-TS)"
}
ts_hevc_cra() {
  local n=ts-hevc-cra d="$MEDIA/ts-hevc-cra"; fresh $n
  # x265 default open-gop; bframes=4 with b-adapt=0 puts the I-frame at 25 at
  # the end of a mini-GOP, so it is a CRA with RASL leading pictures
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc2 192x108)" -f lavfi -i "$(asrc 440)" -map 0:v -map 1:a \
    "${X265[@]}" "${AAC[@]}" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_filename "$d/seg%d.ts" "$d/index.m3u8"
  facts $n "TS HLS, HEVC open GOP (x265 default open-gop): IDR_W_RADL (NAL 20) at frame 0, CRA (NAL 21) at 1 s starting seg1, followed by RASL pictures (NAL 8/9)." \
    "ffmpeg libx265 keyint=25 bframes=4 b-adapt=0 (open-gop default), hls muxer (MPEG-TS)"
}

# ---------------------------------------------------------------- 9
# CEA-608 captions: ffmpeg cannot encode 608 from text, and h264_metadata's
# sei_user_data only writes user_data_unregistered SEI, so tools/cc608_sei.py
# inserts ATSC A/53 GA94 cc_data SEI (registered ITU-T T.35) into a raw H.264
# stream (no B-frames), which ffmpeg then muxes with -c:v copy.
ts_captions() {
  local n=ts-captions d="$MEDIA/ts-captions"; fresh $n
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" "${X264[@]}" -bf 0 "${BITEXACT[@]}" -f h264 "$WORK/cc.h264"
  python3 "$TOOLS/cc608_sei.py" "$WORK/cc.h264" "$WORK/cc608.h264" >&2
  "${FF[@]}" -framerate 25 -f h264 -i "$WORK/cc608.h264" -f lavfi -i "$(asrc 440)" -map 0:v -map 1:a \
    -c:v copy "${AAC[@]}" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_filename "$d/seg%d.ts" "$d/index.m3u8"
  facts $n "TS HLS, H.264 (no B-frames) carrying CEA-608 CC1 pop-on captions in SEI (ATSC A/53 GA94 cc_data): 'HELLO 608' at 0.44 s, 'SEGMENT TWO' at 1.48 s, cleared at 1.80 s." \
    "x264 raw H.264 + tools/cc608_sei.py + ffmpeg -c:v copy hls muxer" --captions
}

# ---------------------------------------------------------------- 10
KEY1=000102030405060708090a0b0c0d0e0f
KEY2=f0e1d2c3b4a5968778695a4b3c2d1e0f
IV1=0x0f0e0d0c0b0a09080706050403020100
keyfile() { printf '%s' "$2" | xxd -r -p > "$1"; }

aes_explicit_iv() {
  local n=aes-explicit-iv d="$MEDIA/aes-explicit-iv"; fresh $n
  keyfile "$d/key.key" $KEY1
  # ffmpeg's own AES-128: key-info file = URI line, key path line, IV line
  # (the IV line is 32 hex digits without "0x")
  printf 'key.key\n%s\n%s\n' "$d/key.key" "${IV1#0x}" > "$WORK/keyinfo"
  ts_encode "$d" seg "$(vsrc testsrc 160x90)" 440 -hls_key_info_file "$WORK/keyinfo"
  mv "$d/seg.m3u8" "$d/index.m3u8"
  facts $n "TS HLS encrypted with AES-128 (CBC, PKCS#7), one key (key.key = $KEY1), EXT-X-KEY with IV=$IV1 for all segments." \
    "ffmpeg hls muxer -hls_key_info_file"
}
aes_implicit_iv() {
  local n=aes-implicit-iv d="$MEDIA/aes-implicit-iv"; fresh $n
  keyfile "$d/key.key" $KEY1
  # ffmpeg writes IV=<first sequence number> explicitly when the key-info
  # file has no IV, so the segments are encrypted here with IV = media
  # sequence number (7, 8) and EXT-X-KEY carries no IV attribute
  ts_encode "$d" seg "$(vsrc testsrc 160x90)" 523.25 -start_number 7
  mv "$d/seg.m3u8" "$d/index.m3u8"
  python3 "$TOOLS/hls_encrypt.py" "$d/index.m3u8" --key 0:key.key:implicit
  facts $n "TS HLS encrypted with AES-128, EXT-X-KEY without IV: the IV is the media sequence number; the playlist starts at EXT-X-MEDIA-SEQUENCE:7 (segments seg7.ts, seg8.ts use IV 7 and 8)." \
    "plain ffmpeg hls encode (-start_number 7), encrypted by tools/hls_encrypt.py (openssl aes-128-cbc)"
}
aes_rotation() {
  local n=aes-rotation d="$MEDIA/aes-rotation"; fresh $n
  keyfile "$d/key1.key" $KEY1
  keyfile "$d/key2.key" $KEY2
  ts_encode "$d" seg "$(vsrc testsrc2 160x90)" 659.25
  mv "$d/seg.m3u8" "$d/index.m3u8"
  python3 "$TOOLS/hls_encrypt.py" "$d/index.m3u8" --key "0:key1.key:$IV1" --key 1:key2.key:implicit
  facts $n "TS HLS with key rotation: seg0 under key1.key with explicit IV=$IV1, then a second EXT-X-KEY (key2.key, no IV attribute, so IV = media sequence number 1) for seg1." \
    "plain ffmpeg hls encode, encrypted by tools/hls_encrypt.py (openssl aes-128-cbc)"
}
aes_fmp4_init() {
  local n=aes-fmp4-init d="$MEDIA/aes-fmp4-init"; fresh $n
  keyfile "$d/key.key" $KEY2
  # ffmpeg 5.1: "Encrypted fmp4 not yet supported" -> encrypt by hand, the
  # EXT-X-KEY written before EXT-X-MAP so that the init section is under it
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 160x90)" -f lavfi -i "$(asrc 440)" -map 0:v -map 1:a \
    "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "${HLS[@]}" -hls_segment_type fmp4 \
    -hls_fmp4_init_filename init.mp4 -hls_segment_filename "$d/seg%d.m4s" "$d/index.m3u8"
  python3 "$TOOLS/hls_encrypt.py" "$d/index.m3u8" --encrypt-map --key "0:key.key:$IV1"
  facts $n "fMP4 HLS (muxed H.264+AAC) where the initialisation section is encrypted too: EXT-X-KEY (AES-128, key.key = $KEY2, IV=$IV1) precedes EXT-X-MAP, so init.mp4 and every segment are AES-128-CBC with that key and IV (RFC 8216 4.3.2.4/4.3.2.5)." \
    "plain ffmpeg hls fmp4 encode, init and segments encrypted by tools/hls_encrypt.py --encrypt-map (openssl aes-128-cbc)"
}

multi_audio() {
  local n=multi-audio d="$MEDIA/multi-audio"; fresh $n
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" -f lavfi -i "$(asrc 440)" -f lavfi -i "$(asrc 659.25)" \
    -map 0:v -map 1:a -map 2:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "${HLS[@]}" \
    -var_stream_map "v:0,agroup:aud,name:video a:0,agroup:aud,language:en,name:audio_en a:1,agroup:aud,language:es,name:audio_es" \
    -master_pl_name master.ffmpeg.m3u8 -hls_segment_filename "$d/%v/seg%d.ts" "$d/%v/index.m3u8"
  python3 "$TOOLS/hls_master.py" "$d/master.ffmpeg.m3u8" "$d/master.m3u8" video/index.m3u8 \
    --attr 'AUDIO="aud"' \
    --media 'TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="1",URI="audio_en/index.m3u8"' \
    --media 'TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="es",NAME="Español",DEFAULT=NO,AUTOSELECT=YES,CHANNELS="1",URI="audio_es/index.m3u8"'
  rm "$d/master.ffmpeg.m3u8"
  facts $n "Multivariant TS: one H.264 video-only variant (video/) and two AAC audio renditions in group \"aud\": English (en, 440 Hz, DEFAULT=YES) and Español (es, 659 Hz, DEFAULT=NO)." \
    "ffmpeg hls muxer -var_stream_map with 2 audio renditions; master rewritten by tools/hls_master.py"
}

webvtt() {
  local n=webvtt d="$MEDIA/webvtt"; fresh $n
  # video+audio with the video starting at PTS 900000 (10 s), as Apple's
  # segmenters do, so the subtitle segments say MPEGTS:900000
  mkdir -p "$d/video"
  "${FF[@]}" -f lavfi -i "$(vsrc testsrc 192x108)" -f lavfi -i "$(asrc 440)" -map 0:v -map 1:a \
    "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" -output_ts_offset 10 -muxdelay 0 -muxpreload 0 "${HLS[@]}" \
    -master_pl_name master.ffmpeg.m3u8 -hls_segment_filename "$d/video/seg%d.ts" "$d/video/index.m3u8"
  local mpegts durs
  mpegts=$(ffprobe -v error -select_streams v:0 -show_entries packet=pts -of csv=p=0 "$d/video/seg0.ts" \
    | tr -dc '0-9\n' | grep . | sort -n | head -1)     # first video PTS (900000)
  durs=$(grep '^#EXTINF:' "$d/video/index.m3u8" | sed 's/#EXTINF:\([0-9.]*\),.*/\1/' | paste -sd, -)
  cat > "$WORK/en.vtt" <<'EOF'
WEBVTT

00:00:00.100 --> 00:00:00.700
Welcome to the lesson.

00:00:00.800 --> 00:00:01.500
This cue spans the segment boundary.

00:00:01.600 --> 00:00:01.950
Goodbye.
EOF
  cat > "$WORK/forced.vtt" <<'EOF'
WEBVTT

00:00:00.500 --> 00:00:01.300 line:10%
[Sign: EXIT]
EOF
  python3 "$TOOLS/webvtt_segment.py" "$WORK/en.vtt" "$d/subs_en" --mpegts "$mpegts" --durations "$durs"
  python3 "$TOOLS/webvtt_segment.py" "$WORK/forced.vtt" "$d/subs_en_forced" --mpegts "$mpegts" --durations "$durs"
  python3 "$TOOLS/hls_master.py" "$d/video/master.ffmpeg.m3u8" "$d/master.m3u8" video/index.m3u8 \
    --attr 'SUBTITLES="subs"' \
    --media 'TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,FORCED=NO,URI="subs_en/index.m3u8"' \
    --media 'TYPE=SUBTITLES,GROUP-ID="subs",LANGUAGE="en",NAME="English (forced)",DEFAULT=NO,AUTOSELECT=YES,FORCED=YES,URI="subs_en_forced/index.m3u8"'
  rm "$d/video/master.ffmpeg.m3u8"
  facts $n "Multivariant TS (H.264+AAC muxed, video starting at PTS 900000) with two WebVTT subtitle renditions in group \"subs\": English and English (forced) FORCED=YES. Each .vtt segment has X-TIMESTAMP-MAP=MPEGTS:$mpegts,LOCAL:00:00:00.000; cues spanning the 1 s boundary are repeated in both segments." \
    "ffmpeg hls muxer (-output_ts_offset 10 -muxdelay 0 -muxpreload 0) for the video; tools/webvtt_segment.py for the subtitles; master by tools/hls_master.py"
}

# ---------------------------------------------------------------- 10
# The audio circle's shape: two AAC renditions (stereo 96 and 64 kb/s) of one tone, each one
# TS file addressed by byte ranges (-hls_flags single_file), and multivariant playlists whose
# audio-only variants point at the same media playlists as their AUDIO groups' renditions, each
# spelling the shared URI another way: relative (master.m3u8, as the arkiva lesson does), with
# "./" (master-dot.m3u8), absolute on the in-memory tests' host (master-absolute.m3u8), a
# rendition without URI (master-no-uri.m3u8, RFC 8216 4.3.4.2.1), and one whose URI names
# another host that redirects to the variant's playlist ({ALIAS} is filled in by the loopback
# test: master-redirect.m3u8). master-languages.m3u8 has English and Spanish renditions of one
# group (the Spanish one is the 64 kb/s encode) and English and Spanish subtitles.
audio_renditions() {
  local n=audio-renditions d="$MEDIA/audio-renditions"; fresh $n
  local rate sub
  for rate in 96 64; do
    "${FF[@]}" -f lavfi -i "$(asrc 440)" -c:a aac -b:a ${rate}k -ac 2 \
      "${BITEXACT[@]}" "${HLS[@]}" -hls_flags single_file -hls_segment_filename "$d/a$rate.ts" "$d/a$rate.m3u8"
  done
  local variant='#EXT-X-STREAM-INF:BANDWIDTH=110000,CODECS="mp4a.40.2",AUDIO="a-1"'
  local lean='#EXT-X-STREAM-INF:BANDWIDTH=75000,CODECS="mp4a.40.2",AUDIO="a-2"'
  master() { # file attributes96 attributes64
    {
      echo "#EXTM3U"
      echo "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a-1\",NAME=\"Default\",DEFAULT=YES,AUTOSELECT=YES,$2"
      echo "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a-2\",NAME=\"Default\",DEFAULT=YES,AUTOSELECT=YES,$3"
      echo "$variant"; echo "a96.m3u8"
      echo "$lean"; echo "a64.m3u8"
    } > "$d/$1"
  }
  master master.m3u8 'URI="a96.m3u8"' 'URI="a64.m3u8"'
  master master-dot.m3u8 'URI="./a96.m3u8"' 'URI="./a64.m3u8"'
  master master-absolute.m3u8 'URI="https://lessons.example/audio-renditions/a96.m3u8"' \
    'URI="https://lessons.example/audio-renditions/a64.m3u8"'
  master master-no-uri.m3u8 'LANGUAGE="en"' 'LANGUAGE="en"'
  master master-redirect.m3u8 'URI="{ALIAS}/audio-renditions/a96.m3u8"' 'URI="{ALIAS}/audio-renditions/a64.m3u8"'
  for sub in en es; do
    printf 'WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:126000,LOCAL:00:00:00.000\n\n00:00:00.500 --> 00:00:01.500\n[%s] A tone.\n' \
      "$sub" > "$d/subs_$sub.vtt"
    printf '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:2.0,\nsubs_%s.vtt\n#EXT-X-ENDLIST\n' \
      "$sub" > "$d/subs_$sub.m3u8"
  done
  {
    echo "#EXTM3U"
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,URI="a96.m3u8"'
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="es",NAME="Español",DEFAULT=NO,AUTOSELECT=YES,URI="a64.m3u8"'
    echo '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,URI="subs_en.m3u8"'
    echo '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",LANGUAGE="es",NAME="Español",DEFAULT=NO,AUTOSELECT=YES,URI="subs_es.m3u8"'
    echo '#EXT-X-STREAM-INF:BANDWIDTH=220000,CODECS="mp4a.40.2",AUDIO="a",SUBTITLES="s"'
    echo "a96.m3u8"
  } > "$d/master-languages.m3u8"
  # The same two languages tagged as ffmpeg and many packagers write them (ISO 639-2).
  sed -e 's/LANGUAGE="en"/LANGUAGE="eng"/' -e 's/LANGUAGE="es"/LANGUAGE="spa"/' \
    "$d/master-languages.m3u8" > "$d/master-languages-iso.m3u8"
  # One media named three ways in one group: plainly, percent-encoded, and with a query.
  {
    echo "#EXTM3U"
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,URI="a96.m3u8"'
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="en",NAME="English (again)",AUTOSELECT=YES,URI="a%39%36.m3u8"'
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",LANGUAGE="en",NAME="English (query)",AUTOSELECT=YES,URI="a96.m3u8?session=2"'
    echo '#EXT-X-STREAM-INF:BANDWIDTH=110000,CODECS="mp4a.40.2",AUDIO="a"'
    echo "a96.m3u8"
  } > "$d/master-twice.m3u8"
  # Video variants (the webvtt lesson's muxed H.264+AAC) whose AUDIO group describes their own
  # audio: without URI beside a separate Spanish rendition (multi-audio's), and by naming the
  # variant's playlist itself.
  local video='#EXT-X-STREAM-INF:BANDWIDTH=105600,RESOLUTION=192x108,CODECS="avc1.64000b,mp4a.40.2",AUDIO="aud"'
  {
    echo "#EXTM3U"
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES'
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="es",NAME="Español",DEFAULT=NO,AUTOSELECT=YES,URI="../multi-audio/audio_es/index.m3u8"'
    echo "$video"; echo "../webvtt/video/index.m3u8"
  } > "$d/master-muxed.m3u8"
  {
    echo "#EXTM3U"
    echo '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",LANGUAGE="en",NAME="English",DEFAULT=YES,AUTOSELECT=YES,URI="../webvtt/video/index.m3u8"'
    echo "$video"; echo "../webvtt/video/index.m3u8"
  } > "$d/master-self.m3u8"
  facts $n "The audio circle's shape: two AAC-LC stereo renditions (96 and 64 kb/s, 1.96 s of 440 Hz), each one TS file addressed by EXT-X-BYTERANGE (1 s segments); audio-only variants that point at the same media playlists as their AUDIO groups' renditions, in several spellings (make-media-fixtures.sh, section 10); master-languages.m3u8 with English and Spanish audio and subtitles." \
    "ffmpeg hls muxer (-hls_flags single_file, MPEG-TS, -c:a aac); playlists by make-media-fixtures.sh"
}

# ---------------------------------------------------------------- main
ALL=(disc-encoders disc-same disc-rates fmp4-base-offset cmaf cmaf-hevc cmaf-disc ts-ac3 ts-map ts-eac3 ts-mp3
     packed-aac packed-mp3 packed-ac3 packed-eac3 ts-heaac ts-heaacv2 packed-heaac
     ts-opengop ts-hevc-cra ts-captions aes-explicit-iv aes-implicit-iv aes-rotation
     aes-fmp4-init multi-audio webvtt cmaf-ac3 cmaf-eac3 cmaf-mp3 cmaf-heaac cmaf-heaacv2
     ts-renditions-disc cmaf-renditions-disc packed-beside-video audio-renditions)
mkdir -p "$MEDIA"
if (($#)); then LIST=("$@"); else LIST=("${ALL[@]}"); fi
for f in "${LIST[@]}"; do
  "${f//-/_}"      # fixture name -> function name (dashes to underscores)
done
du -sk "$MEDIA"/* >&2
