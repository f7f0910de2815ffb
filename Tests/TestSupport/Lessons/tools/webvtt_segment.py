#!/usr/bin/env python3
"""Write a segmented WebVTT subtitle rendition for HLS.

ffmpeg 5.1's hls muxer writes .vtt segments without an X-TIMESTAMP-MAP header
and puts a cue only in the segment where it starts (and its master playlist
references "sub%d.vtt" literally), so the subtitle rendition is written here
the way Apple's mediasubtitlesegmenter and other packagers do:

* every segment starts with
      WEBVTT
      X-TIMESTAMP-MAP=MPEGTS:<mpegts>,LOCAL:00:00:00.000
  meaning cue time LOCAL 00:00:00.000 is 90 kHz PTS <mpegts> of the video;
* a cue is written into every segment whose time range it overlaps, with its
  original (unclipped) times, so a cue spanning a boundary appears twice.

usage: webvtt_segment.py CUES.vtt OUTDIR --mpegts N --durations 1.0,1.0
"""
import argparse, math, os, re

TS = r'(\d+):(\d\d):(\d\d)\.(\d\d\d)'


def secs(h, m, s, ms):
    return int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000


def fmt(t):
    ms = round(t * 1000)
    return '%02d:%02d:%02d.%03d' % (ms // 3600000, ms // 60000 % 60, ms // 1000 % 60, ms % 1000)


def read_cues(path):
    cues = []
    for block in open(path, encoding='utf-8').read().split('\n\n'):
        m = re.search(TS + r' --> ' + TS + r'(.*)', block)
        if not m:
            continue
        g = m.groups()
        text = block[m.end():].strip('\n')
        cues.append((secs(*g[0:4]), secs(*g[4:8]), g[8], text))
    return cues


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('cues')
    ap.add_argument('outdir')
    ap.add_argument('--mpegts', type=int, required=True)
    ap.add_argument('--durations', required=True)
    a = ap.parse_args()
    durs = [float(x) for x in a.durations.split(',')]
    cues = read_cues(a.cues)
    os.makedirs(a.outdir, exist_ok=True)
    pl = ['#EXTM3U', '#EXT-X-VERSION:3',
          '#EXT-X-TARGETDURATION:%d' % max(1, int(math.floor(max(durs) + 0.5))),
          '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD']
    t0 = 0.0
    for k, d in enumerate(durs):
        t1 = t0 + d
        body = ['WEBVTT', 'X-TIMESTAMP-MAP=MPEGTS:%d,LOCAL:00:00:00.000' % a.mpegts, '']
        for s, e, settings, text in cues:
            if s < t1 and e > t0:            # overlaps [t0, t1)
                body += ['%s --> %s%s' % (fmt(s), fmt(e), settings), text, '']
        name = 'seg%d.vtt' % k
        with open(os.path.join(a.outdir, name), 'w', encoding='utf-8') as f:
            f.write('\n'.join(body))
        pl += ['#EXTINF:%.6f,' % d, name]
        t0 = t1
    pl.append('#EXT-X-ENDLIST')
    with open(os.path.join(a.outdir, 'index.m3u8'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(pl) + '\n')


if __name__ == '__main__':
    main()
