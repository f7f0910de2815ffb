#!/usr/bin/env python3
"""Moves a TS lesson's PAT and PMT into an EXT-X-MAP (RFC 8216 §3.2).

usage: ts_tables_map.py SOURCE_DIR DEST_DIR

The map is the first two table packets of the first segment (its PAT, and the PMT that
PAT names); every segment is written without its table packets; the media playlist gets
`#EXT-X-MAP:URI="init-tables.ts"` before its first segment.
"""
import os
import sys


def split(data):
    tables, rest, pmts = bytearray(), bytearray(), set()
    for start in range(0, len(data) - 187, 188):
        packet = data[start:start + 188]
        pid = ((packet[1] & 0x1F) << 8) | packet[2]
        if pid == 0:
            section = 5 + packet[4]
            pmts.add(((packet[section + 10] & 0x1F) << 8) | packet[section + 11])
        if pid == 0 or pid in pmts:
            if len(tables) < 2 * 188:
                tables += packet
        else:
            rest += packet
    return bytes(tables), bytes(rest)


def main(source, dest):
    os.makedirs(dest, exist_ok=True)
    playlist = open(os.path.join(source, "index.m3u8")).read()
    segments = [line for line in playlist.splitlines() if line.endswith(".ts")]
    for index, name in enumerate(segments):
        tables, rest = split(open(os.path.join(source, name), "rb").read())
        if index == 0:
            open(os.path.join(dest, "init-tables.ts"), "wb").write(tables)
        open(os.path.join(dest, name), "wb").write(rest)
    first = "#EXTINF:"
    at = playlist.index(first)
    playlist = playlist[:at] + '#EXT-X-MAP:URI="init-tables.ts"\n' + playlist[at:]
    open(os.path.join(dest, "index.m3u8"), "w").write(playlist)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
