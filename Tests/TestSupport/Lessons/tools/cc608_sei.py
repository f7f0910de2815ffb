#!/usr/bin/env python3
"""Insert CEA-608 captions (CC1, field 1) into an H.264 Annex B stream as
ATSC A/53 Part 4 "GA94" cc_data carried in SEI user_data_registered_itu_t_t35
(payload type 4), one SEI NAL unit per picture, placed just before the
picture's first slice.

ffmpeg cannot encode CEA-608 from text and its h264_metadata bsf can only add
user_data_unregistered (type 5) SEI, so the cc_data is built here.

The input must be one slice per picture and have no B-frames (decode order ==
display order), so that cc_data of picture n is shown at frame n.

usage: cc608_sei.py IN.h264 OUT.h264
"""
import sys

# Pop-on captions, as (frame index, 2-byte 608 pair) events; every other
# picture carries the null pair 0x80 0x80.  Control codes are sent twice, as
# broadcast encoders do.
RCL, ENM, EOC, EDM = (0x14, 0x20), (0x14, 0x2E), (0x14, 0x2F), (0x14, 0x2C)
PAC_ROW15_WHITE = (0x14, 0x60)   # CC1 preamble: row 15, column 0, white


def pop_on(start_frame, text):
    ev = [RCL, RCL, ENM, ENM, PAC_ROW15_WHITE, PAC_ROW15_WHITE]
    t = text.encode('ascii')
    if len(t) % 2:
        t += b'\x00'
    ev += [(t[i], t[i + 1]) for i in range(0, len(t), 2)]
    ev += [EOC, EOC]                     # caption appears at the first EOC
    return {start_frame + i: p for i, p in enumerate(ev)}


SCRIPT = {}
SCRIPT.update(pop_on(0, 'HELLO 608'))        # shown from frame 11 (0.44 s, first EOC)
SCRIPT.update(pop_on(25, 'SEGMENT TWO'))     # shown from frame 37 (1.48 s)
SCRIPT.update({45: EDM, 46: EDM})           # cleared at frame 45 (1.80 s)


def odd_parity(b):
    b &= 0x7F
    return b | (0x80 if bin(b).count('1') % 2 == 0 else 0)


def cc_sei_nal(pair):
    cc = bytes([0xFC, odd_parity(pair[0]), odd_parity(pair[1]),   # field 1, valid
                0xFD, 0x80, 0x80])                                 # field 2 padding
    payload = bytes([0xB5, 0x00, 0x31]) + b'GA94' + bytes([0x03, 0x40 | 2, 0xFF]) + cc + b'\xFF'
    rbsp = bytes([4, len(payload)]) + payload + b'\x80'            # type 4, size, rbsp stop bit
    out = bytearray()
    zeros = 0
    for b in rbsp:                                                 # emulation prevention
        if zeros >= 2 and b <= 3:
            out.append(3)
            zeros = 0
        out.append(b)
        zeros = zeros + 1 if b == 0 else 0
    return b'\x00\x00\x00\x01\x06' + bytes(out)


def split_nals(d):
    starts = []
    i = 0
    while True:
        j = d.find(b'\x00\x00\x01', i)
        if j < 0:
            break
        s = j - 1 if j > 0 and d[j - 1] == 0 else j
        starts.append((s, j + 3))
        i = j + 3
    for k, (s, h) in enumerate(starts):
        e = starts[k + 1][0] if k + 1 < len(starts) else len(d)
        yield d[s:e], d[h] & 0x1F


def main():
    d = open(sys.argv[1], 'rb').read()
    out = bytearray()
    frame = 0
    for nal, t in split_nals(d):
        if t in (1, 5):                      # one slice per picture
            out += cc_sei_nal(SCRIPT.get(frame, (0x80, 0x80)))
            frame += 1
        out += nal
    open(sys.argv[2], 'wb').write(out)
    print('inserted cc_data SEI into %d pictures' % frame)


if __name__ == '__main__':
    main()
