#!/usr/bin/env python3
"""Write FIXTURE/facts.json: what ffprobe/ffmpeg report about the source.

usage: facts.py FIXTURE_DIR --name NAME --desc TEXT [--made-with TEXT] [--captions]

For every media playlist in the folder (master playlists are listed, not
probed) it records:
  * the playlist as parsed (media sequence, EXTINF, discontinuities, keys, maps);
  * ffprobe of the whole playlist through ffmpeg's hls demuxer (-count_packets
    -show_streams -show_packets): per stream codec, profile, size, rate,
    channels, time base, packet count, first PTS/DTS, key-frame PTS, duration;
  * per segment, probed on its own (decrypted with openssl if AES-128; fMP4
    segments are probed as init section + segment): first PTS/DTS per stream,
    packets, key frames with the NAL unit types of each video packet, MPEG-TS
    PAT/PMT (program, PMT PID, stream_type and PID of every stream), fMP4
    track ids / timescales / tfdt, packed-audio ID3 PRIV timestamp, WebVTT
    X-TIMESTAMP-MAP and cues;
  * MD5 of the decoded video frames (raw, native pixel format and size) and of
    the decoded audio (pcm_s16le, native rate and channels) of the whole
    playlist, and the MD5 of the same with each segment decoded on its own and
    the outputs concatenated.
Timestamps are in the stream's time_base (given next to them); *_90k values
are the same converted to 90 kHz.
"""
import argparse, binascii, hashlib, json, os, re, subprocess, tempfile
from fractions import Fraction

HLS_IN = ['-allowed_extensions', 'ALL']   # ffmpeg's hls demuxer option


def run(cmd, data=None):
    return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout


def probe(path, extra=()):
    return json.loads(run(['ffprobe', '-v', 'error', *extra, '-of', 'json', path]))


def attrs(s):
    return {k: v.strip('"') for k, v in re.findall(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)', s)}


def to90k(v, tb):
    if v is None:
        return None
    return int(Fraction(v) * Fraction(tb) * 90000)


# ---------------------------------------------------------------- playlists
def parse_playlist(path):
    text = open(path, encoding='utf-8').read()
    lines = text.splitlines()
    if any(l.startswith('#EXT-X-STREAM-INF') for l in lines):
        variants, media = [], []
        for i, l in enumerate(lines):
            if l.startswith('#EXT-X-MEDIA:'):
                media.append(attrs(l[len('#EXT-X-MEDIA:'):]))
            elif l.startswith('#EXT-X-STREAM-INF:'):
                v = attrs(l[len('#EXT-X-STREAM-INF:'):])
                v['URI'] = lines[i + 1]
                variants.append(v)
        return {'kind': 'master', 'variants': variants, 'media': media}
    pl = {'kind': 'media', 'segments': []}
    seq, key, mp, disc, dur, rng, next_offset = 0, None, None, False, None, None, {}
    for l in lines:
        if l.startswith('#EXT-X-MEDIA-SEQUENCE:'):
            seq = pl['media_sequence'] = int(l.split(':')[1])
        elif l.startswith('#EXT-X-TARGETDURATION:'):
            pl['target_duration'] = int(l.split(':')[1])
        elif l.startswith('#EXT-X-VERSION:'):
            pl['version'] = int(l.split(':')[1])
        elif l.startswith('#EXT-X-KEY:'):
            key = attrs(l[len('#EXT-X-KEY:'):])
            if key.get('METHOD') == 'NONE':
                key = None
        elif l.startswith('#EXT-X-MAP:'):
            mp = attrs(l[len('#EXT-X-MAP:'):])
            mp['key_in_effect'] = key          # RFC 8216 4.3.2.5
            if 'BYTERANGE' in mp:              # length@offset, the offset required here
                length, offset = mp['BYTERANGE'].split('@')
                mp['range'] = (int(offset), int(length))
        elif l.startswith('#EXT-X-BYTERANGE:'):
            rng = l[len('#EXT-X-BYTERANGE:'):]
        elif l == '#EXT-X-DISCONTINUITY':
            disc = True
        elif l.startswith('#EXTINF:'):
            dur = float(l[8:].split(',')[0])
        elif l and not l.startswith('#'):
            seg = {'uri': l, 'media_sequence': seq + len(pl['segments']),
                   'extinf': dur, 'discontinuity_before': disc, 'key': key, 'map': mp}
            if rng is not None:                # RFC 8216 4.3.2.2: no offset continues the last range
                length, _, offset = rng.partition('@')
                start = int(offset) if offset else next_offset.get(l, 0)
                seg['range'] = (start, int(length))
                next_offset[l] = start + int(length)
                rng = None
            pl['segments'].append(seg)
            disc = False
    pl['extinf_sum'] = round(sum(s['extinf'] for s in pl['segments']), 6)
    return pl


def aes_decrypt(data, keyfile, iv):
    key = open(keyfile, 'rb').read()
    return run(['openssl', 'enc', '-d', '-aes-128-cbc', '-K', key.hex(), '-iv', iv.hex()], data)


def key_iv(key, seq):
    if 'IV' in key:
        return bytes.fromhex(key['IV'][2:].rjust(32, '0'))
    return seq.to_bytes(16, 'big')


def read_range(path, rng):
    data = open(path, 'rb').read()
    return data if rng is None else data[rng[0]:rng[0] + rng[1]]


def segment_bytes(base, seg):
    """Plain bytes of the segment as a standalone file (init section prepended).

    A byte-range fMP4 segment keeps its offset in the file it was cut from: a 'free' box fills
    the bytes between the init section and it, so that a tfhd base_data_offset (counted from the
    file's start) still finds its samples."""
    data = read_range(os.path.join(base, seg['uri']), seg.get('range'))
    if seg['key']:
        data = aes_decrypt(data, os.path.join(base, seg['key']['URI']), key_iv(seg['key'], seg['media_sequence']))
    if seg['map']:
        init = read_range(os.path.join(base, seg['map']['URI']), seg['map'].get('range'))
        k = seg['map']['key_in_effect']
        if k:
            init = aes_decrypt(init, os.path.join(base, k['URI']), key_iv(k, None))
        gap = seg['range'][0] - len(init) if 'range' in seg else 0
        if gap >= 8:
            init += gap.to_bytes(4, 'big') + b'free' + bytes(gap - 8)
        data = init + data
    return data


# ----------------------------------------------------------- MPEG-TS PSI
def ts_psi(data):
    def sections(pid):
        for i in range(0, len(data) - 187, 188):
            p = data[i:i + 188]
            if p[0] != 0x47 or ((p[1] & 0x1F) << 8 | p[2]) != pid or not p[1] & 0x40:
                continue
            o = 4
            if (p[3] >> 4) & 2:
                o += 1 + p[4]
            o += 1 + p[o]                      # pointer_field
            return p[o:]
        return None
    pat = sections(0)
    if pat is None:
        return None
    progs = []
    slen = (pat[1] & 0xF) << 8 | pat[2]
    res = {'transport_stream_id': pat[3] << 8 | pat[4], 'programs': progs}
    for j in range(8, 3 + slen - 4, 4):
        num, pmt_pid = pat[j] << 8 | pat[j + 1], (pat[j + 2] & 0x1F) << 8 | pat[j + 3]
        if num == 0:
            continue
        pmt = sections(pmt_pid)
        prog = {'program_number': num, 'pmt_pid': pmt_pid, 'streams': []}
        if pmt is not None:
            plen = (pmt[1] & 0xF) << 8 | pmt[2]
            prog['pcr_pid'] = (pmt[8] & 0x1F) << 8 | pmt[9]
            k = 12 + ((pmt[10] & 0xF) << 8 | pmt[11])
            while k < 3 + plen - 4:
                st, pid = pmt[k], (pmt[k + 1] & 0x1F) << 8 | pmt[k + 2]
                il = (pmt[k + 3] & 0xF) << 8 | pmt[k + 4]
                desc, d = [], pmt[k + 5:k + 5 + il]
                while len(d) >= 2:
                    desc.append({'tag': '0x%02x' % d[0], 'data': d[2:2 + d[1]].hex()})
                    d = d[2 + d[1]:]
                prog['streams'].append({'stream_type': '0x%02x' % st, 'pid': pid, 'pid_hex': '0x%04x' % pid,
                                        'descriptors': desc})
                k += 5 + il
        progs.append(prog)
    return res


# ----------------------------------------------------------- ISO BMFF
def boxes(d, o=0, end=None):
    end = len(d) if end is None else end
    while o + 8 <= end:
        size = int.from_bytes(d[o:o + 4], 'big')
        typ = d[o + 4:o + 8].decode('latin1')
        hdr = 8
        if size == 1:
            size, hdr = int.from_bytes(d[o + 8:o + 16], 'big'), 16
        elif size == 0:
            size = end - o
        yield typ, o + hdr, o + size
        o += size


def find(d, path, o=0, end=None):
    for typ, s, e in boxes(d, o, end):
        if typ == path[0]:
            if len(path) == 1:
                yield s, e
            else:
                yield from find(d, path[1:], s, e)


def mp4_info(d):
    info = {'top_level_boxes': [t for t, _, _ in boxes(d)], 'tracks': [], 'fragments': []}
    for s, e in find(d, ['moov', 'trak']):
        tk = {}
        for hs, he in find(d, ['tkhd'], s, e):
            v = d[hs]
            tk['track_id'] = int.from_bytes(d[hs + (20 if v else 12):hs + (24 if v else 16)], 'big')
            w = hs + (88 if v else 76)             # 16.16 fixed point
            tk['tkhd_width'] = int.from_bytes(d[w:w + 4], 'big') / 65536
            tk['tkhd_height'] = int.from_bytes(d[w + 4:w + 8], 'big') / 65536
        for hs, he in find(d, ['mdia', 'mdhd'], s, e):
            v = d[hs]
            tk['timescale'] = int.from_bytes(d[hs + (20 if v else 12):hs + (24 if v else 16)], 'big')
        for hs, he in find(d, ['mdia', 'hdlr'], s, e):
            tk['handler'] = d[hs + 8:hs + 12].decode('latin1')
        for hs, he in find(d, ['mdia', 'minf', 'stbl', 'stsd'], s, e):
            tk['sample_entry'] = d[hs + 12:hs + 16].decode('latin1')
        for hs, he in find(d, ['edts', 'elst'], s, e):
            v, n = d[hs], int.from_bytes(d[hs + 4:hs + 8], 'big')
            ents, q = [], hs + 8
            for _ in range(n):
                if v:
                    dur, mt = int.from_bytes(d[q:q + 8], 'big'), int.from_bytes(d[q + 8:q + 16], 'big', signed=True)
                    q += 20
                else:
                    dur, mt = int.from_bytes(d[q:q + 4], 'big'), int.from_bytes(d[q + 4:q + 8], 'big', signed=True)
                    q += 12
                ents.append({'segment_duration': dur, 'media_time': mt})
            tk['edit_list'] = ents
        info['tracks'].append(tk)
    for s, e in find(d, ['moof']):
        fr = {'trafs': []}
        for hs, he in find(d, ['mfhd'], s, e):
            fr['sequence_number'] = int.from_bytes(d[hs + 4:hs + 8], 'big')
        for ts_, te in find(d, ['traf'], s, e):
            tr = {}
            for hs, he in find(d, ['tfhd'], ts_, te):
                tr['track_id'] = int.from_bytes(d[hs + 4:hs + 8], 'big')
            for hs, he in find(d, ['tfdt'], ts_, te):
                v = d[hs]
                tr['base_media_decode_time'] = int.from_bytes(d[hs + 4:hs + (12 if v else 8)], 'big')
            for hs, he in find(d, ['trun'], ts_, te):
                tr['trun_sample_count'] = int.from_bytes(d[hs + 4:hs + 8], 'big')
            fr['trafs'].append(tr)
        info['fragments'].append(fr)
    return info


# ----------------------------------------------------------- packed audio
def id3_info(d):
    if d[:3] != b'ID3':
        return None
    size = (d[6] << 21) | (d[7] << 14) | (d[8] << 7) | d[9]
    res = {'id3_version': '2.%d.%d' % (d[3], d[4]), 'tag_bytes': 10 + size}
    body = d[10:10 + size]
    o = 0
    while o + 10 <= len(body) and body[o:o + 4] != b'\0\0\0\0':
        fid = body[o:o + 4].decode('latin1')
        fs = int.from_bytes(body[o + 4:o + 8], 'big')
        if d[3] == 4:
            fs = (body[o + 4] << 21) | (body[o + 5] << 14) | (body[o + 6] << 7) | body[o + 7]
        fd = body[o + 10:o + 10 + fs]
        if fid == 'PRIV':
            owner, _, priv = fd.partition(b'\0')
            res['priv_owner'] = owner.decode('latin1')
            if owner == b'com.apple.streaming.transportStreamTimestamp':
                res['transport_stream_timestamp_90k'] = int.from_bytes(priv, 'big')
        o += 10 + fs
    return res


# ----------------------------------------------------------- NAL units
def nal_summary(pkt_hex, codec, annexb):
    d = binascii.unhexlify(pkt_hex)
    nals = []
    if annexb:                                     # MPEG-TS: start codes
        for m in re.finditer(b'\x00\x00\x01', d):
            nals.append(d[m.end():])
    else:                                          # length-prefixed (mp4)
        o = 0
        while o + 4 <= len(d):
            n = int.from_bytes(d[o:o + 4], 'big')
            nals.append(d[o + 4:o + 4 + n])
            o += 4 + n
    out = []
    for n in nals:
        if not n:
            continue
        if codec == 'h264':
            t = n[0] & 0x1F
            if t == 6:                             # list SEI payload types
                rb = re.sub(b'\x00\x00\x03', b'\x00\x00', n[1:])
                o, pts = 0, []
                while o < len(rb) and rb[o] != 0x80:
                    pt = 0
                    while rb[o] == 0xFF:
                        pt += 255
                        o += 1
                    pt += rb[o]
                    o += 1
                    ps = 0
                    while rb[o] == 0xFF:
                        ps += 255
                        o += 1
                    ps += rb[o]
                    o += 1 + ps
                    pts.append(str(pt))
                out.append('6(sei:%s)' % '+'.join(pts))
            else:
                out.append(str(t))
        else:
            out.append(str((n[0] >> 1) & 0x3F))
    return ','.join(out)


H264_NAL = '1 non-IDR slice, 5 IDR slice, 6 SEI (sei payload types: 4 registered ITU-T T.35 e.g. GA94 captions, 5 unregistered (x264 info), 6 recovery point), 7 SPS, 8 PPS, 9 AUD'
HEVC_NAL = '0/1 TRAIL, 8/9 RASL, 19/20 IDR, 21 CRA, 32 VPS, 33 SPS, 34 PPS, 35 AUD, 39 prefix SEI'


def read_packets(path, fmt_in=()):
    """ffprobe packets + streams + format of one input."""
    j = probe(path, [*fmt_in, '-count_packets', '-show_streams', '-show_format', '-show_packets', '-show_data'])
    return j


def stream_summary(st):
    keys = ['index', 'codec_type', 'codec_name', 'profile', 'codec_tag_string', 'width', 'height',
            'pix_fmt', 'sample_fmt', 'sample_rate', 'channels', 'channel_layout', 'time_base',
            'r_frame_rate', 'start_pts', 'start_time', 'duration_ts', 'duration', 'nb_read_packets', 'id']
    s = {k: st[k] for k in keys if k in st}
    if 'nb_read_packets' in s:
        s['nb_read_packets'] = int(s['nb_read_packets'])
    return s


def packets_by_stream(j, annexb):
    streams = {st['index']: st for st in j.get('streams', [])}
    res = {}
    for p in j.get('packets', []):
        st = streams[p['stream_index']]
        res.setdefault(p['stream_index'], []).append(p)
    out = {}
    for idx, pk in res.items():
        st = streams[idx]
        tb = st['time_base']
        first = pk[0]
        info = {'codec_type': st['codec_type'], 'codec_name': st.get('codec_name'), 'time_base': tb,
                'packets': len(pk),
                'first_packet_pts': first.get('pts'), 'first_packet_dts': first.get('dts'),
                'first_packet_pts_90k': to90k(first.get('pts'), tb),
                'first_packet_dts_90k': to90k(first.get('dts'), tb),
                'min_pts': min(p['pts'] for p in pk if 'pts' in p),
                'min_pts_90k': to90k(min(p['pts'] for p in pk if 'pts' in p), tb)}
        if st['codec_type'] == 'video':
            info['key_frame_pts'] = [p.get('pts') for p in pk if 'K' in p.get('flags', '')]
            codec = st.get('codec_name')
            info['packets_pts_dts_flags_nals'] = [
                [p.get('pts'), p.get('dts'), p.get('flags'),
                 nal_summary(re.sub(r'^[0-9a-f]{8}: |  .*$', '', p.get('data', ''), flags=re.M)
                             .replace(' ', '').replace('\n', ''), codec, annexb) if codec in ('h264', 'hevc') else None]
                for p in pk]
        out[str(idx)] = info
    return out


# ----------------------------------------------------------- decoding
def md5_decode(inp, kind, pre=()):
    """MD5 of ffmpeg's decoded output piped as raw bytes (same bytes that
    `-f md5` hashes for one stream; a pipe is used because rawvideo/s16le
    have no timestamp checks, so timestamps going back at a discontinuity
    cannot make the muxer drop or refuse packets)."""
    if kind == 'video':
        cmd = ['ffmpeg', '-v', 'error', *pre, '-i', inp, '-map', '0:v:0', '-autoscale', '0',
               '-fps_mode', 'passthrough', '-f', 'rawvideo', '-']
    else:
        cmd = ['ffmpeg', '-v', 'error', *pre, '-i', inp, '-map', '0:a:0', '-c:a', 'pcm_s16le', '-f', 's16le', '-']
    r = subprocess.run(cmd, capture_output=True)
    return r.stdout, cmd, r.stderr.decode(errors='replace').strip()


def probe_media_playlist(base, name, captions):
    path = os.path.join(base, name)
    pl = parse_playlist(path)
    whole = read_packets(path, HLS_IN)
    is_mp4 = any(s['map'] for s in pl['segments'])   # fMP4: length-prefixed NAL units
    kinds = sorted({s['codec_type'] for s in whole.get('streams', []) if s['codec_type'] in ('video', 'audio')})
    res = {'playlist': pl,
           'ffprobe_playlist': {
               'command': 'ffprobe -allowed_extensions ALL -count_packets -show_streams -show_format -show_packets ' + name,
               'format': {k: whole['format'].get(k) for k in ('format_name', 'start_time', 'duration', 'nb_streams')},
               'streams': [stream_summary(s) for s in whole.get('streams', [])],
               'packets_by_stream': packets_by_stream(whole, not is_mp4)}}
    # streams the hls demuxer adds after the start (e.g. new PIDs after a
    # discontinuity): ffmpeg/ffprobe map streams at open time and ignore them
    r = subprocess.run(['ffmpeg', '-hide_banner', '-v', 'info', *HLS_IN, '-i', path, '-map', '0', '-c', 'copy',
                        '-f', 'null', '-'], capture_output=True)
    new = [re.sub(r'^\[hls @ 0x[0-9a-f]+\] ', '', l) for l in r.stderr.decode(errors='replace').splitlines()
           if 'New ' in l and 'stream' in l]
    if new:
        res['ffprobe_playlist']['streams_added_mid_playlist'] = {
            'messages': new,
            'note': 'ffmpeg\'s hls demuxer creates new streams when a later segment has other PIDs; ffprobe and '
                    'the ffmpeg CLI only use the streams found at open time, so packets/frames/decoded md5 '
                    'of the whole playlist cover only those (the segments_concatenated md5 covers all)'}
    if any(s['codec_type'] == 'video' for s in whole.get('streams', [])):
        # -of csv: ffprobe 5.1 -show_frames -of json segfaults on some playlists whose
        # streams change mid-way (disc-encoders), csv output does not
        r = subprocess.run(['ffprobe', '-v', 'error', *HLS_IN, '-select_streams', 'v:0', '-show_frames',
                            '-show_entries', 'frame=pts,key_frame,pict_type,width,height:side_data=side_data_type',
                            '-of', 'csv=nokey=0', path], capture_output=True)
        frames = []
        for l in r.stdout.decode(errors='replace').splitlines():
            if l.startswith('frame,'):             # frame,k=v,...[,side_data,k=v,...]...
                parts = l[len('frame,'):].split(',side_data,')
                f = dict(kv.split('=', 1) for kv in parts[0].split(',') if '=' in kv)
                f['side_data_list'] = [dict(kv.split('=', 1) for kv in p.split(',') if '=' in kv)
                                       for p in parts[1:]]
                frames.append(f)
        for f in frames:
            for k in ('pts', 'key_frame', 'width', 'height'):
                if f.get(k, 'N/A') not in ('N/A', ''):
                    f[k] = int(f[k])
        res['decoded_video_frames'] = {
            'count': len(frames),
            'pict_types_in_output_order': ''.join(f.get('pict_type', '?') for f in frames),
            'key_frame_pts': [f.get('pts') for f in frames if f.get('key_frame') == 1],
            'sizes': sorted({'%dx%d' % (f['width'], f['height']) for f in frames}),
            'frames_with_a53_closed_captions': sum(
                1 for f in frames if any('A53' in sd.get('side_data_type', '') for sd in f.get('side_data_list', [])))}
    # whole-playlist decode
    md5 = {}
    for k in kinds:
        out, cmd, err = md5_decode(path, k, HLS_IN)
        md5[k] = {'md5': hashlib.md5(out).hexdigest(), 'bytes': len(out),
                  'command': ' '.join(cmd[:1] + cmd[3:]).replace(path, name) + ' | md5sum'}
        if err:
            md5[k]['ffmpeg_messages'] = re.sub(r' @ 0x[0-9a-f]+', '', err)[:600]
    res['decoded_md5_whole_playlist'] = md5
    # per segment
    segs, cat = [], {k: b'' for k in kinds}
    vtt_lines = None
    with tempfile.TemporaryDirectory() as td:
        for seg in pl['segments']:
            ext = os.path.splitext(seg['uri'])[1].lower()
            entry = {'uri': seg['uri'], 'media_sequence': seg['media_sequence'], 'extinf': seg['extinf'],
                     'bytes': os.path.getsize(os.path.join(base, seg['uri'])),
                     'discontinuity_before': seg['discontinuity_before']}
            if seg['key']:
                entry['key'] = {'uri': seg['key']['URI'], 'iv_attribute': seg['key'].get('IV'),
                                'iv_used': '0x' + key_iv(seg['key'], seg['media_sequence']).hex()}
            if seg['map']:
                entry['map'] = seg['map']['URI']
            data = segment_bytes(base, seg)
            if ext == '.vtt':
                txt = data.decode('utf-8')
                m = re.search(r'X-TIMESTAMP-MAP=([^\n]*)', txt)
                entry['x_timestamp_map'] = m.group(1) if m else None
                entry['cues'] = re.findall(r'([\d:.]+ --> [\d:.]+[^\n]*)\n([^\n]+)', txt)
                segs.append(entry)
                continue
            tmp = os.path.join(td, 'seg' + ('.mp4' if seg['map'] else ext))
            open(tmp, 'wb').write(data)
            fmt_in = []
            if ext in ('.aac', '.mp3', '.ac3', '.ec3', '.eac3'):
                fmt_in = ['-f', {'.aac': 'aac', '.mp3': 'mp3', '.ac3': 'ac3', '.ec3': 'eac3', '.eac3': 'eac3'}[ext]]
                entry['id3'] = id3_info(data)
            if ext == '.ts':
                entry['mpegts_psi'] = ts_psi(data)
            if seg['map']:
                entry['fmp4'] = mp4_info(data)
            j = read_packets(tmp, fmt_in)
            entry['streams'] = [stream_summary(s) for s in j.get('streams', [])]
            entry['packets_by_stream'] = packets_by_stream(j, not seg['map'])
            for k in kinds:
                out, cmd, err = md5_decode(tmp, k, fmt_in)
                cat[k] += out
                entry.setdefault('decoded_bytes', {})[k] = len(out)
                if err:
                    entry.setdefault('ffmpeg_messages', {})[k] = re.sub(r' @ 0x[0-9a-f]+', '', err)[:400]
            segs.append(entry)
    res['segments'] = segs
    res['decoded_md5_segments_concatenated'] = {
        k: {'md5': hashlib.md5(v).hexdigest(), 'bytes': len(v),
            'note': 'each segment decoded alone (decrypted; fMP4 as init+segment) with the same ffmpeg '
                    'options, raw outputs concatenated in playlist order'} for k, v in cat.items()}
    if captions:
        out = subprocess.run(['ffmpeg', '-v', 'error', '-f', 'lavfi', '-i', 'movie=%s[out0+subcc]' % name,
                              '-map', '0:s', '-f', 'srt', '-'], capture_output=True, cwd=base)
        res['captions_extracted_srt'] = {
            'command': "ffmpeg -f lavfi -i 'movie=%s[out0+subcc]' -map 0:s -f srt -" % name,
            'srt': out.stdout.decode('utf-8', 'replace')}
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dir')
    ap.add_argument('--name', required=True)
    ap.add_argument('--desc', required=True)
    ap.add_argument('--made-with', default='')
    ap.add_argument('--captions', action='store_true')
    a = ap.parse_args()
    ver = run(['ffmpeg', '-version']).decode().splitlines()[0]
    facts = {'fixture': a.name, 'description': a.desc, 'made_with': a.made_with,
             'generator': 'make-media-fixtures.sh', 'tool': ver,
             'units': 'pts/dts/start_pts/duration_ts are in the stream time_base shown beside them '
                      '(MPEG-TS and the hls demuxer: 1/90000; fMP4 probed alone: the track timescale); '
                      '*_90k fields are converted to 90 kHz; durations in seconds',
             'nal_unit_types': {'h264': H264_NAL, 'hevc': HEVC_NAL},
             'files': {}, 'playlists': {}}
    for root, _, files in os.walk(a.dir):
        for f in sorted(files):
            if f == 'facts.json':
                continue
            rel = os.path.relpath(os.path.join(root, f), a.dir)
            facts['files'][rel] = {'bytes': os.path.getsize(os.path.join(root, f)),
                                   'md5': hashlib.md5(open(os.path.join(root, f), 'rb').read()).hexdigest()}
    facts['files'] = dict(sorted(facts['files'].items()))
    for rel in facts['files']:
        if rel.endswith('.m3u8'):
            pl = parse_playlist(os.path.join(a.dir, rel))
            if pl['kind'] == 'master':
                facts['playlists'][rel] = pl
    for rel in facts['files']:
        if rel.endswith('.m3u8') and rel not in facts['playlists']:
            d = os.path.dirname(rel)
            r = probe_media_playlist(os.path.join(a.dir, d), os.path.basename(rel), a.captions)
            facts['playlists'][rel] = r
    facts['total_bytes'] = sum(v['bytes'] for v in facts['files'].values())
    with open(os.path.join(a.dir, 'facts.json'), 'w', encoding='utf-8') as f:
        json.dump(facts, f, indent=1, ensure_ascii=False)
        f.write('\n')


if __name__ == '__main__':
    main()
