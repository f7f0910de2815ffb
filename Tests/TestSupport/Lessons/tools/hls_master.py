#!/usr/bin/env python3
"""Rewrite the multivariant (master) playlist that ffmpeg 5.1 wrote.

ffmpeg's master names renditions "audio_1"/"subtitle_0" whatever
var_stream_map says, lists an audio rendition a second time as an audio-only
variant, and (for subtitles) points at "sub%d.vtt".  This keeps ffmpeg's
BANDWIDTH / AVERAGE-BANDWIDTH / RESOLUTION / CODECS of the video variant and
writes the renditions given on the command line, the way Apple's HLS
authoring spec lays them out.

usage: hls_master.py FFMPEG_MASTER OUT VARIANT_URI [--attr 'AUDIO="aud"'] [--media 'TYPE=...'] ...
"""
import argparse, re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('ffmaster')
    ap.add_argument('out')
    ap.add_argument('variant_uri')
    ap.add_argument('--attr', action='append', default=[])
    ap.add_argument('--media', action='append', default=[])
    a = ap.parse_args()
    lines = open(a.ffmaster, encoding='utf-8').read().splitlines()
    version = next((l.split(':')[1] for l in lines if l.startswith('#EXT-X-VERSION:')), '3')
    inf = next(l for l in lines if l.startswith('#EXT-X-STREAM-INF:') and 'RESOLUTION=' in l)
    keep = []
    for k in ('BANDWIDTH', 'AVERAGE-BANDWIDTH', 'RESOLUTION', 'CODECS'):
        m = re.search(r'[:,]%s=("[^"]*"|[^,]*)' % k, inf)
        if m:
            keep.append('%s=%s' % (k, m.group(1)))
    out = ['#EXTM3U', '#EXT-X-VERSION:%s' % version, '#EXT-X-INDEPENDENT-SEGMENTS', '']
    out += ['#EXT-X-MEDIA:' + m for m in a.media]
    out += ['', '#EXT-X-STREAM-INF:' + ','.join(keep + ['FRAME-RATE=25.000'] + a.attr), a.variant_uri]
    open(a.out, 'w', encoding='utf-8').write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
