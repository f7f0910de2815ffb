#!/usr/bin/env bash
# Regenerates the media fixtures with ffmpeg and prints the facts ffprobe reports about them,
# which facts.json records and the tests check against. Tests never run this: they read the
# committed files. Needs ffmpeg (Debian: apt-get install ffmpeg).
#   Tests/MediaContainersTests/Fixtures/make-fixtures.sh          regenerate and print facts
#   Tests/MediaContainersTests/Fixtures/make-fixtures.sh OUT.mp4 [ORIGINAL.ts]
#                                                          check a remuxed file (and that it
#                                                          decodes to the original's frames)
set -euo pipefail
cd "$(dirname "$0")"
if [[ $# -ge 1 ]]; then
    ffprobe -v error -count_packets -show_entries \
        stream=codec_name,sample_rate,channels,width,height,nb_read_packets,start_time,duration:format=format_name,duration \
        -of json "$1"
    if [[ $# -eq 2 ]]; then
        # The remux must decode to the very frames and samples of the original.
        for map in 0:v 0:a; do
            echo "$map original $(ffmpeg -v error -i "$2" -map "$map?" -f md5 - 2>/dev/null)"
            echo "$map remuxed  $(ffmpeg -v error -i "$1" -map "$map?" -f md5 - 2>/dev/null)"
        done
    fi
    exit 0
fi
ffmpeg -hide_banner -loglevel error -f lavfi -i "sine=frequency=440:duration=3:sample_rate=44100" \
    -ac 2 -c:a aac -b:a 64k -f mpegts -y audio-aac.ts
ffmpeg -hide_banner -loglevel error -f lavfi -i "sine=frequency=440:duration=3:sample_rate=44100" \
    -ac 2 -c:a aac -b:a 64k -f hls -hls_time 1 -hls_playlist_type vod \
    -hls_segment_filename "hls-audio/seg%d.ts" -y hls-audio/index.m3u8
ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc=size=192x108:rate=25" \
    -f lavfi -i "sine=frequency=330:sample_rate=44100" -t 2 -c:v libx264 -profile:v main -bf 2 -g 25 \
    -pix_fmt yuv420p -c:a aac -b:a 48k -ac 1 -f mpegts -y av-h264-aac.ts
mkdir -p hls-av/video hls-av/audio
ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc=size=192x108:rate=25" -t 2 -an -c:v libx264 \
    -profile:v main -bf 2 -g 25 -pix_fmt yuv420p -f hls -hls_time 1 -hls_playlist_type vod \
    -hls_segment_filename "hls-av/video/seg%d.ts" -y hls-av/video/index.m3u8
ffmpeg -hide_banner -loglevel error -f lavfi -i "sine=frequency=330:sample_rate=44100:duration=2" -ac 1 \
    -c:a aac -b:a 48k -f hls -hls_time 1 -hls_playlist_type vod \
    -hls_segment_filename "hls-av/audio/seg%d.ts" -y hls-av/audio/index.m3u8
ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc2=size=160x90:rate=25" -t 1 -c:v libx265 \
    -x265-params log-level=error:bframes=2 -pix_fmt yuv420p -f mpegts -y hevc.ts
# Two clips whose timestamps both start at 1.4 s: joined, they make a discontinuity.
ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc=size=192x108:rate=25" \
    -f lavfi -i "sine=frequency=500:sample_rate=44100" -t 1 -c:v libx264 -bf 2 -g 25 -pix_fmt yuv420p \
    -c:a aac -b:a 48k -ac 1 -f mpegts -y disc-a.ts
ffmpeg -hide_banner -loglevel error -f lavfi -i "smptebars=size=192x108:rate=25" \
    -f lavfi -i "sine=frequency=700:sample_rate=44100" -t 1 -c:v libx264 -bf 2 -g 25 -pix_fmt yuv420p \
    -c:a aac -b:a 48k -ac 1 -f mpegts -y disc-b.ts
# Fragmented MP4 segments, for the downloads tests (copied to Tests/DownloadsTests/Fixtures/media).
mkdir -p hls-fmp4
ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc=size=192x108:rate=25" \
    -f lavfi -i "sine=frequency=440:sample_rate=44100" -t 2 -c:v libx264 -bf 2 -g 25 -pix_fmt yuv420p \
    -c:a aac -b:a 48k -ac 1 -f hls -hls_time 1 -hls_playlist_type vod -hls_segment_type fmp4 \
    -hls_fmp4_init_filename init.mp4 -hls_segment_filename "hls-fmp4/seg%d.m4s" -y hls-fmp4/index.m3u8
# AC-3 and E-AC-3 in six channel layouts (ETSI TS 102 366 acmod 1, 2, 3, 4, 6, 7; the LFE on and
# off; 48, 44.1 and 32 kHz), a quarter of a second of raw syncframes each, for the silent frames
# that fill a gap.
mkdir -p ac3-layouts eac3-layouts
for spec in mono:48000 stereo:48000 3.0:44100 2.1:48000 quad:48000 5.1:44100; do
    ffmpeg -hide_banner -loglevel error -f lavfi -i "sine=frequency=440:sample_rate=${spec#*:}:duration=0.25" \
        -af "aformat=channel_layouts=${spec%%:*}" -c:a ac3 -b:a 96k -fflags +bitexact -flags:a +bitexact \
        -f ac3 -y "ac3-layouts/${spec%%:*}.ac3"
done
for spec in mono:48000 stereo:48000 3.0:44100 2.1:48000 quad:48000 5.1:32000; do
    ffmpeg -hide_banner -loglevel error -f lavfi -i "sine=frequency=440:sample_rate=${spec#*:}:duration=0.25" \
        -af "aformat=channel_layouts=${spec%%:*}" -c:a eac3 -b:a 96k -fflags +bitexact -flags:a +bitexact \
        -f eac3 -y "eac3-layouts/${spec%%:*}.eac3"
done
for file in audio-aac.ts av-h264-aac.ts hls-audio/seg*.ts hls-av/*/seg*.ts hevc.ts disc-a.ts disc-b.ts; do
    echo "== $file"
    ffprobe -v error -count_packets -show_entries \
        stream=index,codec_name,profile,sample_rate,channels,width,height,start_pts,nb_read_packets -of compact "$file"
done
echo "== video packets whose PTS differs from their DTS (B-frames)"
ffprobe -v error -select_streams v:0 -show_entries packet=pts,dts -of csv=p=0 av-h264-aac.ts | awk -F, '$1 != $2' | wc -l
