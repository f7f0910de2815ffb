#!/usr/bin/env python3
"""Cut a raw audio elementary stream into HLS *packed audio* segments.

RFC 8216 section 3.4: a packed audio segment is the raw frames of one
elementary stream (ADTS AAC, MP3, AC-3 or E-AC-3) preceded by an ID3v2 tag
holding a PRIV frame whose owner is
"com.apple.streaming.transportStreamTimestamp" and whose data is the 33-bit
MPEG-2 90 kHz timestamp of the first sample of the segment, as an 8-byte
big-endian integer (upper 31 bits zero).

ffmpeg 5.1's hls muxer does not write such segments (it always writes MPEG-TS,
even for "seg%d.aac" names), hence this script.

usage: pack_audio.py CODEC INPUT OUTDIR EXT [--base 90kHz] [--seg 1.0]
  CODEC: aac | mp3 | ac3 | eac3     INPUT: raw ES (adts / mp3 / ac3 / eac3)
Writes OUTDIR/seg<N>.<EXT> and OUTDIR/index.m3u8.  Segments are cut at the
first frame boundary at or after each multiple of --seg seconds.  The
timestamp of segment k = base + round(samples_before_k * 90000 / rate), mod 2^33.
"""
import argparse, math, os, struct, sys

AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000,
             12000, 11025, 8000, 7350]


def adts_frames(d):
    i = 0
    while i + 7 <= len(d):
        if d[i] != 0xFF or (d[i + 1] & 0xF6) != 0xF0:
            raise SystemExit('ADTS sync lost at %d' % i)
        sfi = (d[i + 2] >> 2) & 0xF
        length = ((d[i + 3] & 3) << 11) | (d[i + 4] << 3) | (d[i + 5] >> 5)
        blocks = (d[i + 6] & 3) + 1
        # ADTS of HE-AAC carries the core (half) rate and 1024 samples per
        # block, which is the same duration as 2048 samples at the output rate.
        yield i, length, 1024 * blocks, AAC_RATES[sfi]
        i += length


MP3_BR = {  # (mpeg1?, layer) -> kbps table
    (True, 3): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
    (False, 3): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    (True, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    (False, 2): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
}
MP3_SR = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000]}


def mp3_frames(d):
    i = 0
    while i + 4 <= len(d):
        if d[i] != 0xFF or (d[i + 1] & 0xE0) != 0xE0:
            raise SystemExit('MPEG audio sync lost at %d' % i)
        ver = (d[i + 1] >> 3) & 3          # 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
        layer = 4 - ((d[i + 1] >> 1) & 3)  # 1, 2 or 3
        if layer == 1:
            raise SystemExit('layer I not supported')
        bri = d[i + 2] >> 4
        sri = (d[i + 2] >> 2) & 3
        pad = (d[i + 2] >> 1) & 1
        mpeg1 = ver == 3
        br = MP3_BR[(mpeg1, 3 if layer == 3 else 2)][bri] * 1000
        sr = MP3_SR[ver][sri]
        if layer == 3:
            samples = 1152 if mpeg1 else 576
        else:
            samples = 1152
        length = samples // 8 * br // sr + pad
        yield i, length, samples, sr
        i += length


AC3_BR = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384,
          448, 512, 576, 640]


def ac3_frames(d):
    i = 0
    while i + 6 <= len(d):
        if d[i] != 0x0B or d[i + 1] != 0x77:
            raise SystemExit('AC-3 sync lost at %d' % i)
        bsid = d[i + 5] >> 3
        if bsid <= 10:                       # AC-3
            fscod = d[i + 4] >> 6
            fsc = d[i + 4] & 0x3F
            sr = [48000, 44100, 32000][fscod]
            br = AC3_BR[fsc >> 1]
            if fscod == 0:
                words = 2 * br
            elif fscod == 2:
                words = 3 * br
            else:
                words = br * 1000 * 1536 // (44100 * 16) + (fsc & 1)
            yield i, 2 * words, 1536, sr
            i += 2 * words
        else:                                # E-AC-3 (bsid 16)
            strmtyp = d[i + 2] >> 6
            words = (((d[i + 2] & 7) << 8) | d[i + 3]) + 1
            fscod = d[i + 4] >> 6
            if fscod == 3:
                sr = [24000, 22050, 16000][(d[i + 4] >> 4) & 3]
                blocks = 6
            else:
                sr = [48000, 44100, 32000][fscod]
                blocks = [1, 2, 3, 6][(d[i + 4] >> 4) & 3]
            # only independent substreams advance the clock
            yield i, 2 * words, (256 * blocks if strmtyp != 1 else 0), sr
            i += 2 * words


def syncsafe(n):
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def id3_timestamp_tag(ts90k):
    owner = b'com.apple.streaming.transportStreamTimestamp\x00'
    data = owner + struct.pack('>Q', ts90k & ((1 << 33) - 1))
    frame = b'PRIV' + syncsafe(len(data)) + b'\x00\x00' + data
    return b'ID3\x04\x00\x00' + syncsafe(len(frame)) + frame   # ID3v2.4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('codec', choices=['aac', 'mp3', 'ac3', 'eac3'])
    ap.add_argument('input')
    ap.add_argument('outdir')
    ap.add_argument('ext')
    ap.add_argument('--base', type=int, default=900000, help='90 kHz timestamp of the first sample')
    ap.add_argument('--seg', type=float, default=1.0)
    a = ap.parse_args()
    d = open(a.input, 'rb').read()
    if d[:3] == b'ID3':
        raise SystemExit('input starts with an ID3 tag; write the ES without one')
    parser = {'aac': adts_frames, 'mp3': mp3_frames, 'ac3': ac3_frames, 'eac3': ac3_frames}[a.codec]
    frames = list(parser(d))
    rate = frames[0][3]
    segs = []            # [start_sample, [(off, len)]]
    t = 0
    for off, ln, ns, sr in frames:
        if sr != rate:
            raise SystemExit('sample rate changes')
        if not segs or t >= len(segs) * a.seg * rate:
            segs.append([t, []])
        segs[-1][1].append((off, ln))
        t += ns
    os.makedirs(a.outdir, exist_ok=True)
    lines = []
    durs = []
    for k, (start, fr) in enumerate(segs):
        end = segs[k + 1][0] if k + 1 < len(segs) else t
        durs.append((end - start) / rate)
        ts = (a.base + round(start * 90000 / rate)) % (1 << 33)
        name = 'seg%d.%s' % (k, a.ext)
        with open(os.path.join(a.outdir, name), 'wb') as f:
            f.write(id3_timestamp_tag(ts))
            for off, ln in fr:
                f.write(d[off:off + ln])
        lines += ['#EXTINF:%.6f,' % durs[-1], name]
    pl = ['#EXTM3U', '#EXT-X-VERSION:3',
          # RFC 8216 4.3.3.1: each EXTINF rounded to the nearest integer <= this
          '#EXT-X-TARGETDURATION:%d' % max(1, int(math.floor(max(durs) + 0.5))),
          '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD'] + lines + ['#EXT-X-ENDLIST']
    with open(os.path.join(a.outdir, 'index.m3u8'), 'w') as f:
        f.write('\n'.join(pl) + '\n')
    print('%s: %d frames at %d Hz -> %d segments %s' % (a.codec, len(frames), rate, len(segs),
                                                       ['%.4f' % x for x in durs]))


if __name__ == '__main__':
    main()
