#!/usr/bin/env python3
"""Join media playlists written by ffmpeg (same folder) into one playlist with
#EXT-X-DISCONTINUITY between them.  Each part's #EXT-X-MAP (fMP4) is repeated
after the discontinuity, so an initialisation-section change happens mid-playlist.

usage: hls_join.py OUT.m3u8 PART1.m3u8 PART2.m3u8 ...
EXT-X-TARGETDURATION = the largest EXTINF rounded to the nearest integer
(RFC 8216 4.3.3.1); EXT-X-VERSION = the largest of the parts'.
"""
import math, re, sys


def read(path):
    version, mapline, segs, dur = 3, None, [], None
    for ln in open(path, encoding='utf-8').read().splitlines():
        if ln.startswith('#EXT-X-VERSION:'):
            version = int(ln.split(':')[1])
        elif ln.startswith('#EXT-X-MAP:'):
            mapline = ln
        elif ln.startswith('#EXTINF:'):
            dur = ln
        elif ln and not ln.startswith('#'):
            segs.append((dur, ln))
    return version, mapline, segs


def main():
    out, parts = sys.argv[1], [read(p) for p in sys.argv[2:]]
    durs = [float(re.match(r'#EXTINF:([0-9.]+)', d).group(1)) for _, _, s in parts for d, _ in s]
    lines = ['#EXTM3U', '#EXT-X-VERSION:%d' % max(p[0] for p in parts),
             '#EXT-X-TARGETDURATION:%d' % max(1, int(math.floor(max(durs) + 0.5))),
             '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD']
    for i, (_, mapline, segs) in enumerate(parts):
        if i:
            lines.append('#EXT-X-DISCONTINUITY')
        if mapline:
            lines.append(mapline)
        for d, uri in segs:
            lines += [d, uri]
    lines.append('#EXT-X-ENDLIST')
    open(out, 'w', encoding='utf-8').write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
