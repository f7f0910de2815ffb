#!/usr/bin/env python3
"""Print a one-paragraph summary of every media/<name>/facts.json (used for README.md)."""
import json, os, sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'media')
for name in sorted(os.listdir(root)):
    f = json.load(open(os.path.join(root, name, 'facts.json')))
    print('## %s  (%d bytes, %d files)' % (name, f['total_bytes'], len(f['files'])))
    for pl, p in f['playlists'].items():
        if p.get('kind') == 'master':
            print('  %s: master, %d variant(s), media: %s' % (pl, len(p['variants']),
                  ', '.join('%s/%s/%s' % (m.get('TYPE'), m.get('LANGUAGE'), m.get('NAME')) for m in p['media'])))
            continue
        fp = p['ffprobe_playlist']
        ss = []
        for s in fp['streams']:
            if s['codec_type'] == 'video':
                ss.append('%s %s %sx%s pkts=%s start_pts=%s' % (s['codec_name'], s.get('profile'), s.get('width'), s.get('height'), s.get('nb_read_packets'), s.get('start_pts')))
            else:
                ss.append('%s %s %s %sch pkts=%s start_pts=%s' % (s.get('codec_name'), s.get('profile'), s.get('sample_rate'), s.get('channels'), s.get('nb_read_packets'), s.get('start_pts')))
        print('  %s: %d segs, dur=%s; %s' % (pl, len(p['segments']), fp['format'].get('duration'), ' | '.join(ss)))
        if 'streams_added_mid_playlist' in fp:
            print('    added mid-playlist:', fp['streams_added_mid_playlist']['messages'])
        dv = p.get('decoded_video_frames')
        if dv:
            print('    frames=%d %s sizes=%s keys=%s a53=%d' % (dv['count'], dv['pict_types_in_output_order'], dv['sizes'], dv['key_frame_pts'], dv['frames_with_a53_closed_captions']))
        for k, v in p['decoded_md5_whole_playlist'].items():
            c = p['decoded_md5_segments_concatenated'][k]
            print('    md5 %s whole=%s (%d B) segs=%s (%d B) %s' % (k, v['md5'][:8], v['bytes'], c['md5'][:8], c['bytes'], 'SAME' if v['md5'] == c['md5'] else 'DIFF'))
        for s in p['segments']:
            extra = []
            if s.get('mpegts_psi'):
                extra.append('PMT %s: %s' % (s['mpegts_psi']['programs'][0]['pmt_pid'], ','.join('%s@%s' % (x['stream_type'], x['pid_hex']) for x in s['mpegts_psi']['programs'][0]['streams'])))
            if s.get('id3'):
                extra.append('ID3 ts=%s' % s['id3'].get('transport_stream_timestamp_90k'))
            if s.get('key'):
                extra.append('key=%s iv=%s' % (s['key']['uri'], s['key']['iv_used']))
            if s.get('x_timestamp_map'):
                extra.append('%s cues=%d' % (s['x_timestamp_map'], len(s['cues'])))
            first = {k: (v['first_packet_pts'], v.get('key_frame_pts'), [x[3] for x in v.get('packets_pts_dts_flags_nals', [])[:2]]) if v['codec_type'] == 'video' else v['first_packet_pts'] for k, v in s.get('packets_by_stream', {}).items()}
            print('    %s%s %dB extinf=%s first=%s %s %s' % ('DISC ' if s['discontinuity_before'] else '', s['uri'], s['bytes'], s['extinf'], first, '; '.join(extra), ('MSG:' + str(s['ffmpeg_messages'])[:150]) if s.get('ffmpeg_messages') else ''))
        if 'captions_extracted_srt' in p:
            print('    captions:', p['captions_extracted_srt']['srt'].replace('\n', ' / '))
