#!/usr/bin/env python3
"""Write FIXTURE/packets.json: every coded frame of the source, as ffmpeg's demuxers read it.

usage: packets.py FIXTURE_DIR

For every media playlist of the fixture (WebVTT playlists aside), each segment is
probed on its own exactly as facts.py does (decrypted with openssl when AES-128;
fMP4 as its init section followed by the segment), with
`ffprobe -show_streams -show_packets -show_data`. For each stream it
records, in the order the demuxer delivers them (decode order):

  [dts, pts, duration, key, payload digest, parameter-set digest]

* dts/pts/duration are in the stream's time_base (recorded beside them).
* key is 1 when ffmpeg flags the packet K.
* The payload digest is FNV-1a 64 (hex) of the packet's payload in the shape an
  MP4 sample carries it, so that a test without ffmpeg can compare a remuxed
  file's samples with the source's frames:
    - H.264/HEVC: the NAL units (Annex B split at start codes for MPEG-TS,
      4-byte lengths for fMP4), trailing zero bytes removed, access unit
      delimiters (H.264 type 9, HEVC 35) and parameter sets (H.264 7, 8; HEVC
      32, 33, 34) left out, each remaining unit prefixed by its 4-byte length;
    - AAC read from ADTS (MPEG-TS, packed audio): the raw frame, without its
      7- or 9-byte ADTS header; from fMP4 the packet as it is;
    - AC-3, E-AC-3, MP3: the frame as it is.
* The parameter-set digest (video only) is FNV-1a 64 of the parameter sets in
  effect when the frame is decoded: the last unit of each parameter-set type
  seen so far in the segment's stream (from the fMP4 init's avcC/hvcC first,
  then in-band units), in ascending NAL type order, each prefixed by its 4-byte
  length. Two frames with the same payload and parameter-set digests decode to
  the same picture (given the frames before them), which is what the remux
  tests check sample by sample.

A packed-audio segment (RFC 8216 section 3.4) also gets `clock_90k`, the
timestamp of its ID3 PRIV frame com.apple.streaming.transportStreamTimestamp:
ffmpeg's raw audio demuxers start every such file at 0, and this is where the
segment's clock starts on the lesson's 90 kHz timeline.
"""
import json, os, re, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from facts import id3_info, parse_playlist, probe, segment_bytes  # noqa: E402


def fnv(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return '%016x' % h


def unhex(dump):
    """Bytes of an ffprobe -show_data hex dump."""
    out = bytearray()
    for line in dump.splitlines():
        if ':' not in line:
            continue
        hexpart = line.split(':', 1)[1][:41]       # 8 groups of 4 hex digits, spaced
        out += bytes.fromhex(hexpart.replace(' ', ''))
    return bytes(out)


def annexb_units(d):
    starts = [m.end() for m in re.finditer(b'\x00\x00\x01', d)]
    units = []
    for i, s in enumerate(starts):
        e = starts[i + 1] - 3 if i + 1 < len(starts) else len(d)
        u = d[s:e].rstrip(b'\x00')
        if u:
            units.append(u)
    return units


def length_units(d, size=4):
    units, o = [], 0
    while o + size <= len(d):
        n = int.from_bytes(d[o:o + size], 'big')
        units.append(d[o + size:o + size + n])
        o += size + n
    return units


def config_units(codec, extradata):
    """Parameter sets of an avcC or hvcC record."""
    d, units = extradata, []
    if not d:
        return units
    if codec == 'h264' and d[0] == 1:
        o, n = 6, d[5] & 0x1F
        for _ in range(n):
            ln = int.from_bytes(d[o:o + 2], 'big'); units.append(d[o + 2:o + 2 + ln]); o += 2 + ln
        n = d[o]; o += 1
        for _ in range(n):
            ln = int.from_bytes(d[o:o + 2], 'big'); units.append(d[o + 2:o + 2 + ln]); o += 2 + ln
    elif codec == 'hevc' and len(d) > 23 and d[0] == 1:
        o, arrays = 23, d[22]
        for _ in range(arrays):
            n = int.from_bytes(d[o + 1:o + 3], 'big'); o += 3
            for _ in range(n):
                ln = int.from_bytes(d[o:o + 2], 'big'); units.append(d[o + 2:o + 2 + ln]); o += 2 + ln
    return units


def nal_type(codec, unit):
    return (unit[0] >> 1) & 0x3F if codec == 'hevc' else unit[0] & 0x1F


PARAMETER_SETS = {'h264': (7, 8), 'hevc': (32, 33, 34)}
DELIMITER = {'h264': 9, 'hevc': 35}


def prefixed(units):
    return b''.join(len(u).to_bytes(4, 'big') + u for u in units)


def stream_packets(j, is_mp4):
    streams = {s['index']: s for s in j.get('streams', [])}
    state = {}
    for idx, s in streams.items():
        codec = s.get('codec_name')
        state[idx] = {}
        if codec in PARAMETER_SETS and is_mp4:
            for u in config_units(codec, unhex(s.get('extradata', ''))):
                state[idx][nal_type(codec, u)] = u
    out = {}
    for p in j.get('packets', []):
        idx = p['stream_index']
        s = streams[idx]
        codec = s.get('codec_name')
        data = unhex(p.get('data', ''))
        ps = None
        if codec in PARAMETER_SETS:
            units = length_units(data) if is_mp4 else annexb_units(data)
            kept = []
            for u in units:
                t = nal_type(codec, u)
                if t in PARAMETER_SETS[codec]:
                    state[idx][t] = u
                elif t != DELIMITER[codec]:
                    kept.append(u)
            payload = prefixed(kept)
            ps = fnv(prefixed([state[idx][t] for t in sorted(state[idx])]))
        elif codec == 'aac' and not is_mp4 and len(data) >= 7 and data[0] == 0xFF and data[1] & 0xF6 == 0xF0:
            payload = data[7 if data[1] & 1 else 9:]
        else:
            payload = data
        entry = out.setdefault(str(idx), {'codec_type': s['codec_type'], 'codec_name': codec,
                                          'time_base': s['time_base'], 'packets': []})
        entry['packets'].append([p.get('dts'), p.get('pts'), p.get('duration'),
                                 1 if 'K' in p.get('flags', '') else 0, fnv(payload), ps])
    return [out[k] for k in sorted(out, key=int)]


def main():
    base = sys.argv[1]
    result = {'about': __doc__.split('\n\n', 2)[2].strip(), 'playlists': {}}
    playlists = []
    for root, _, files in os.walk(base):
        for f in sorted(files):
            if f.endswith('.m3u8'):
                playlists.append(os.path.relpath(os.path.join(root, f), base))
    for rel in sorted(playlists):
        folder = os.path.join(base, os.path.dirname(rel))
        pl = parse_playlist(os.path.join(base, rel))
        if pl['kind'] != 'media' or any(s['uri'].endswith('.vtt') for s in pl['segments']):
            continue
        segments = []
        with tempfile.TemporaryDirectory() as td:
            for seg in pl['segments']:
                ext = os.path.splitext(seg['uri'])[1].lower()
                tmp = os.path.join(td, 'seg' + ('.mp4' if seg['map'] else ext))
                open(tmp, 'wb').write(segment_bytes(folder, seg))
                fmt_in = []
                if ext in ('.aac', '.mp3', '.ac3', '.ec3', '.eac3'):
                    fmt_in = ['-f', {'.aac': 'aac', '.mp3': 'mp3', '.ac3': 'ac3', '.ec3': 'eac3', '.eac3': 'eac3'}[ext]]
                j = probe(tmp, [*fmt_in, '-show_streams', '-show_packets', '-show_data'])
                entry = {'uri': seg['uri'], 'discontinuity_before': seg['discontinuity_before'],
                         'streams': stream_packets(j, bool(seg['map']))}
                if fmt_in:
                    entry['clock_90k'] = (id3_info(segment_bytes(folder, seg)) or {}).get('transport_stream_timestamp_90k')
                segments.append(entry)
        result['playlists'][rel] = segments
    with open(os.path.join(base, 'packets.json'), 'w', encoding='utf-8') as f:
        json.dump(result, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main()
