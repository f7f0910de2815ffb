#!/usr/bin/env python3
"""Encrypt the segments of a plain media playlist with AES-128 (CBC, PKCS#7
padding, i.e. HLS METHOD=AES-128) using openssl, and rewrite the playlist with
the #EXT-X-KEY tags.

usage: hls_encrypt.py PLAYLIST --key FROM:KEYFILE:IV [--key ...] [--encrypt-map]
  FROM     index (0-based, in playlist order) of the first segment the key applies to
  KEYFILE  16-byte key file in the playlist's folder (URI is written relative)
  IV       0x + 32 hex digits (written as IV=...), or "implicit": no IV attribute,
           so the IV is the segment's media sequence number (RFC 8216 5.2)
  --encrypt-map  the EXT-X-KEY of the first key is written BEFORE #EXT-X-MAP and
           the initialisation section is encrypted with it (RFC 8216 4.3.2.4:
           the key in effect at EXT-X-MAP applies to it; needs an explicit IV).
Segment files are replaced by their ciphertext.
"""
import argparse, os, subprocess


def enc(path, key, iv):
    data = open(path, 'rb').read()
    out = subprocess.run(['openssl', 'enc', '-e', '-aes-128-cbc', '-K', key.hex(), '-iv', iv.hex()],
                         input=data, capture_output=True, check=True).stdout
    open(path, 'wb').write(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('playlist')
    ap.add_argument('--key', action='append', required=True)
    ap.add_argument('--encrypt-map', action='store_true')
    a = ap.parse_args()
    base = os.path.dirname(a.playlist) or '.'
    keys = {}
    for spec in a.key:
        frm, kf, iv = spec.split(':')
        keys[int(frm)] = (kf, iv)
    lines = open(a.playlist, encoding='utf-8').read().splitlines()
    seq = next((int(l.split(':')[1]) for l in lines if l.startswith('#EXT-X-MEDIA-SEQUENCE:')), 0)
    out, idx, cur = [], 0, None
    for ln in lines:
        if ln.startswith('#EXT-X-MAP:') and a.encrypt_map:
            kf, iv = keys[0]
            if iv == 'implicit':
                raise SystemExit('an encrypted EXT-X-MAP needs an explicit IV')
            out.append('#EXT-X-KEY:METHOD=AES-128,URI="%s",IV=%s' % (kf, iv))
            cur = keys[0]
            uri = ln.split('URI="')[1].split('"')[0]
            enc(os.path.join(base, uri), open(os.path.join(base, kf), 'rb').read(), bytes.fromhex(iv[2:]))
            out.append(ln)
            continue
        if ln.startswith('#EXTINF:') and idx in keys and keys[idx] != cur:
            kf, iv = cur = keys[idx]
            out.append('#EXT-X-KEY:METHOD=AES-128,URI="%s"%s' % (kf, '' if iv == 'implicit' else ',IV=' + iv))
        out.append(ln)
        if ln and not ln.startswith('#'):
            kf, iv = cur
            ivb = (seq + idx).to_bytes(16, 'big') if iv == 'implicit' else bytes.fromhex(iv[2:])
            enc(os.path.join(base, ln), open(os.path.join(base, kf), 'rb').read(), ivb)
            idx += 1
    # EXT-X-KEY with IV needs version >= 2; keep what ffmpeg wrote if higher
    open(a.playlist, 'w', encoding='utf-8').write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
