#!/usr/bin/env python3
"""Writes an HLS media playlist over one fragmented MP4 file, as byte ranges of it.

usage: fmp4_byterange.py FILE.mp4 PLAYLIST.m3u8 [--fragments-per-segment N]

The file's ftyp and moov become the EXT-X-MAP (BYTERANGE="length@0"); every N moof+mdat pairs
(with any styp, sidx or free boxes before them) become one segment (an mfra after the last
fragment belongs to none), an EXT-X-BYTERANGE of the
same file, its EXTINF the fragments' duration read from their tfdt and trun boxes. ffmpeg's
mp4 muxer with -movflags frag_keyframe+empty_moov writes tfhd with base_data_offset (flags
0x000001): sample offsets count from the file's start, which such a segment keeps."""
import os, struct, sys


def boxes(data, start=0, end=None):
    at, end = start, len(data) if end is None else end
    while at + 8 <= end:
        size, kind = struct.unpack('>I4s', data[at:at + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack('>Q', data[at + 8:at + 16])[0], 16
        if size < header or at + size > end:
            raise SystemExit(f'bad box at {at}')
        yield kind.decode('latin1'), at, at + header, at + size
        at += size


def timescales(data, moov):
    """track_ID -> timescale, from each trak's tkhd and mdhd."""
    out = {}
    for kind, _, body, end in boxes(data, moov[2], moov[3]):
        if kind != 'trak':
            continue
        tid, scale = None, None
        for k2, _, b2, e2 in boxes(data, body, end):
            if k2 == 'tkhd':
                v = data[b2]
                tid = struct.unpack('>I', data[b2 + (20 if v == 1 else 12):][:4])[0]
            if k2 == 'mdia':
                for k3, _, b3, e3 in boxes(data, b2, e2):
                    if k3 == 'mdhd':
                        v = data[b3]
                        scale = struct.unpack('>I', data[b3 + (20 if v == 1 else 12):][:4])[0]
        out[tid] = scale
    return out


def fragment_duration(data, moof, scales):
    """The longest track's duration in the fragment, in seconds (sum of its samples)."""
    longest = 0.0
    for kind, _, body, end in boxes(data, moof[2], moof[3]):
        if kind != 'traf':
            continue
        tid, default, total = None, 0, 0
        for k2, _, b2, e2 in boxes(data, body, end):
            flags = int.from_bytes(data[b2 + 1:b2 + 4], 'big')
            if k2 == 'tfhd':
                tid = struct.unpack('>I', data[b2 + 4:b2 + 8])[0]
                at = b2 + 8 + (8 if flags & 1 else 0) + (4 if flags & 2 else 0)
                if flags & 8:
                    default = struct.unpack('>I', data[at:at + 4])[0]
            if k2 == 'trun':
                count = struct.unpack('>I', data[b2 + 4:b2 + 8])[0]
                at = b2 + 8 + (4 if flags & 1 else 0) + (4 if flags & 4 else 0)
                per = sum(4 for bit in (0x100, 0x200, 0x400, 0x800) if flags & bit)
                for i in range(count):
                    total += struct.unpack('>I', data[at:at + 4])[0] if flags & 0x100 else default
                    at += per
        longest = max(longest, total / scales.get(tid, 1))
    return longest


def main():
    path, playlist = sys.argv[1], sys.argv[2]
    per = int(sys.argv[sys.argv.index('--fragments-per-segment') + 1]) if '--fragments-per-segment' in sys.argv else 1
    data = open(path, 'rb').read()
    top = list(boxes(data))
    moov = next(b for b in top if b[0] == 'moov')
    scales = timescales(data, moov)
    init_end = moov[3]
    segments, start, count, seconds = [], init_end, 0, 0.0
    for kind, at, body, end in top:
        if at < init_end:
            continue
        if kind == 'moof':
            seconds += fragment_duration(data, (kind, at, body, end), scales)
        if kind == 'mdat':
            count += 1
            if count == per:
                segments.append((start, end - start, seconds))
                start, count, seconds = end, 0, 0.0
    if count:                                  # fragments left over after the last full segment
        last_end = max(end for kind, at, body, end in top if kind == 'mdat')
        segments.append((start, last_end - start, seconds))
    # Boxes after the last fragment (an mfra index) belong to no segment.
    name = os.path.basename(path)
    lines = ['#EXTM3U', '#EXT-X-VERSION:7', f'#EXT-X-TARGETDURATION:{max(round(s[2]) for s in segments)}',
             '#EXT-X-PLAYLIST-TYPE:VOD', '#EXT-X-MEDIA-SEQUENCE:0', f'#EXT-X-MAP:URI="{name}",BYTERANGE="{init_end}@0"']
    for offset, length, secs in segments:
        lines += [f'#EXTINF:{secs:.6f},', f'#EXT-X-BYTERANGE:{length}@{offset}', name]
    lines.append('#EXT-X-ENDLIST')
    open(playlist, 'w').write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
