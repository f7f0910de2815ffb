#!/usr/bin/env bash
# Regenerates the media fixtures with ffmpeg and prints the facts ffprobe reports about them,
# which facts.json records and the tests check against. Tests never run this: they read the
# committed files. Needs ffmpeg (Debian: apt-get install ffmpeg).
#   Tests/MediaContainersTests/Fixtures/make-fixtures.sh          regenerate and print facts
#   Tests/MediaContainersTests/Fixtures/make-fixtures.sh FILE.m4a check a remuxed file
set -euo pipefail
cd "$(dirname "$0")"
if [[ $# -eq 1 ]]; then
    ffprobe -v error -count_packets -show_entries \
        stream=codec_name,sample_rate,channels,nb_read_packets,duration:format=format_name,duration -of json "$1"
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
for file in audio-aac.ts av-h264-aac.ts hls-audio/seg*.ts; do
    echo "== $file"
    ffprobe -v error -count_packets -show_entries \
        stream=index,codec_name,profile,sample_rate,channels,width,height,start_pts,nb_read_packets -of compact "$file"
done
echo "== video packets whose PTS differs from their DTS (B-frames)"
ffprobe -v error -select_streams v:0 -show_entries packet=pts,dts -of csv=p=0 av-h264-aac.ts | awk -F, '$1 != $2' | wc -l
