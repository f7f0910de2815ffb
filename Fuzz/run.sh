#!/usr/bin/env bash
# Builds one libFuzzer target against MediaCore, instrumented with AddressSanitizer, and runs it.
#   Fuzz/run.sh TARGET SECONDS        e.g. Fuzz/run.sh hls 600
#   Fuzz/run.sh all SECONDS           every target, as many at once as the machine has cores
# Targets: hls attribute-list csv catalog-json uri-template slider-body played-segments progress-state
#          catalog-store offline-library ts-demuxer adts id3 uri-resolver
#          range-response journal hls-download fmp4-reader segments-to-mp4 webvtt.
#
# SwiftPM cannot link a libFuzzer executable (it aliases `main` to a module entry point that a
# fuzzer target does not have), so the library modules are built by SwiftPM with the sanitizers
# in their own scratch directory and each target is linked with swiftc. Nothing here touches the
# main build. The corpus starts from Fuzz/Corpus/TARGET (kept in the repository, findings
# included) and the test fixtures, and grows in Fuzz/out/TARGET/corpus; crashing inputs land in
# Fuzz/out/TARGET/crashes. Every target runs under a 512 MB allocation limit, so an input that
# makes the code allocate that much (8 KB inputs by default) is a finding too.
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$script")"
target="${1:?usage: run.sh TARGET|all SECONDS}"
seconds="${2:-60}"
all_targets=(hls attribute-list csv catalog-json uri-template slider-body played-segments progress-state catalog-store offline-library ts-demuxer adts id3 uri-resolver range-response journal hls-download fmp4-reader segments-to-mp4 webvtt)
scratch=.build
# Release by default; CI builds debug (-Onone), which compiles in about half the time and still
# fuzzes a short budget usefully.
configuration="${MEDIACORE_FUZZ_CONFIGURATION:-release}"
optimization=$([[ "$configuration" == release ]] && echo -O || echo -Onone)
modules=(DecimalFormatting Locking HTTPSupport HLS MediaContainers Progress Downloads OfflineLessons Player Catalog SliderFlow)
build_modules() {
    for module in "${modules[@]}"; do
        swift build -c "$configuration" --package-path .. --scratch-path "$PWD/$scratch" --target "$module" \
            -Xswiftc -sanitize=fuzzer,address >&2
    done
}
if [[ "$target" == all ]]; then
    # The modules are built once; each target then only links against them. Linking a target
    # and fuzzing it each use one core, so MEDIACORE_FUZZ_JOBS targets (the machine's cores by
    # default) go at once: each still fuzzes for SECONDS on a core of its own. Their logs are
    # printed in the list's order once all have ended, and any failure fails the run.
    build_modules
    jobs="${MEDIACORE_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"
    mkdir -p out
    # A status left by an earlier run must never stand for this one's.
    for each in "${all_targets[@]}"; do rm -f "out/$each.status"; done
    running=0
    for each in "${all_targets[@]}"; do
        if (( running >= jobs )); then wait -n || true; running=$((running - 1)); fi
        # The status is written whatever the target's (the subshell inherits `set -e`).
        ( status=0
          MEDIACORE_FUZZ_MODULES_BUILT=1 "$script" "$each" "$seconds" >"out/$each.log" 2>&1 || status=$?
          echo "$status" >"out/$each.status" ) &
        running=$((running + 1))
    done
    wait
    status=0
    for each in "${all_targets[@]}"; do
        echo "=== $each"
        cat "out/$each.log"
        [[ "$(cat "out/$each.status" 2>/dev/null)" == 0 ]] || { echo "=== $each FAILED" >&2; status=1; }
    done
    exit $status
fi
if [[ -z "${MEDIACORE_FUZZ_MODULES_BUILT:-}" ]]; then build_modules; fi
objects=()
for module in "${modules[@]}"; do objects+=("$scratch"/"$configuration"/"$module".build/*.o); done
binary="$scratch/fuzz-$target"
swiftc "$optimization" -parse-as-library -sanitize=fuzzer,address -I "$scratch/$configuration/Modules" \
    "Targets/$target/Fuzz.swift" "${objects[@]}" -o "$binary" 2> >(grep -v "Cannot export local symbol" >&2)

root=..
corpus="out/$target/corpus"
max_len="${FUZZ_MAX_LEN:-8192}"
mkdir -p "$corpus" "out/$target/crashes"
# The seed corpus kept in the repository (findings included), then the fixtures below.
if [[ -d "Corpus/$target" ]]; then cp -n "Corpus/$target"/* "$corpus"/ 2>/dev/null || true; fi
case "$target" in
    hls) cp -n "$root"/Tests/HLSTests/Fixtures/hls/corpus/*.m3u8 "$root"/Tests/HLSTests/Fixtures/hls/arkiva/*.m3u8 "$root"/Tests/HLSTests/Fixtures/hls/low-latency/*.m3u8 "$corpus"/ 2>/dev/null || true ;;
    csv) cp -n "$root"/Tests/CatalogTests/Fixtures/*.csv "$corpus"/ 2>/dev/null || true ;;
    catalog-json) cp -n "$root"/Tests/CatalogTests/Fixtures/*.json "$corpus"/ 2>/dev/null || true ;;
    uri-template) printf '%s' 'https://content.viaplay.com/ios-se/serier{?dtg,productsPerPage}' > "$corpus/viaplay" ;;
    slider-body) cp -n "$root"/Tests/SliderFlowTests/Fixtures/*.json "$corpus"/ 2>/dev/null || true ;;
    played-segments) printf '%s' '0[.]12.5[,]14[.]30' > "$corpus/brief" ;;
    progress-state) printf '%s' '{"completed":false,"duration":600,"format":"mediacore.watch-progress","resume":{"deviceID":"ipad","position":30,"recordedAt":1763700000},"timeSpent":{"ipad":41.5},"version":1,"watched":[[0,12.5],[14,30]]}' > "$corpus/sample" ;;
    attribute-list) printf '%s' 'AVERAGE-BANDWIDTH=2000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.97,AUDIO="a",HDCP-LEVEL=TYPE-0' > "$corpus/variant" ;;
    catalog-store) printf '%s' 'seed' > "$corpus/seed" ;;
    ts-demuxer) cp -n "$root"/Tests/MediaContainersTests/Fixtures/hls-audio/seg3.ts "$corpus"/ 2>/dev/null || true
        head -c 4136 "$root"/Tests/MediaContainersTests/Fixtures/av-h264-aac.ts > "$corpus/av-start" ;;
    adts) printf '\xff\xf1\x50\x80\x01\x7f\xfc\x21\x00' > "$corpus/frame" ;;
    id3) printf 'ID3\x04\x00\x00\x00\x00\x00\x3f' > "$corpus/header" ;;
    offline-library) printf '%s' '{"items":{"13":{"remoteURL":"https://m.example/v.mp4","state":{"downloaded":{"byteCount":5000,"fileName":"13-1a2b.mp4"}}},"7":{"remoteURL":"https://m.example/v.mp4","state":{"downloading":{"fraction":0.5}}}},"version":1}' > "$corpus/sample" ;;
    uri-resolver) ;;
    range-response) ;;
    journal) ;;
    hls-download) ;;
    fmp4-reader)
        # Two bytes of length, the initialisation section, then the first segment.
        for rendition in video audio_en; do
            init=$(ls "$root"/Tests/TestSupport/Lessons/cmaf/$rendition/init_*.mp4)
            python3 -c 'import sys; i=open(sys.argv[1],"rb").read(); s=open(sys.argv[2],"rb").read()[:60000]; sys.stdout.buffer.write(len(i).to_bytes(2,"big")+i+s)' \
                "$init" "$root"/Tests/TestSupport/Lessons/cmaf/$rendition/seg0.m4s > "$corpus/cmaf-$rendition"
        done
        max_len=65536 ;;
    segments-to-mp4)
        # One segment (0x00), no discontinuity, then real segments' bytes.
        for lesson in disc-same packed-aac ts-mp3; do
            first=$(ls "$root"/Tests/TestSupport/Lessons/$lesson/ | grep -E '\.(ts|aac|mp3)$' | head -1)
            { printf '\x00\x00'; head -c 60000 "$root/Tests/TestSupport/Lessons/$lesson/$first"; } > "$corpus/$lesson"
        done
        # Fragmented MP4: one segment with an initialisation section (0x04), its two-byte length,
        # the section, then the segment; and two segments, the second opening a discontinuity.
        lessons="$root/Tests/TestSupport/Lessons"
        python3 - "$lessons" "$corpus" <<'PY'
import sys
lessons, corpus = sys.argv[1], sys.argv[2]
def read(path): return open(f"{lessons}/{path}", "rb").read()
def seed(name, head, init, body):
    open(f"{corpus}/{name}", "wb").write(bytes(head) + len(init).to_bytes(2, "big") + init + body)
seed("cmaf-video", [0x04, 0], read("cmaf/video/init_0.mp4"), read("cmaf/video/seg0.m4s"))
seed("cmaf-audio", [0x04, 0], read("cmaf/audio_en/init_1.mp4"), read("cmaf/audio_en/seg0.m4s"))
seed("cmaf-hevc", [0x04, 0], read("cmaf-hevc/video/init_0.mp4"), read("cmaf-hevc/video/seg0.m4s")[:40000])
a, b = read("cmaf-disc/a0.m4s"), read("cmaf-disc/b0.m4s")
seed("cmaf-disc", [0x05, 0b10], read("cmaf-disc/initA.mp4"), a + b[:len(a)])
PY
        max_len=65536 ;;
    webvtt) cp -n "$root"/Tests/TestSupport/Lessons/webvtt/subs_en/*.vtt "$corpus"/ 2>/dev/null || true
        printf 'WEBVTT\r\n\r\nNOTE x\r\n\r\nid\r\n1:00:00.000 --> 1:00:01.500 align:start\r\n<i>a</i> &amp;\r\n' > "$corpus/crlf" ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
esac
# Swift's own crash handler would fight the sanitizer's; Swift runtime caches look like leaks.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
"$binary" "$corpus" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -artifact_prefix="out/$target/crashes/" -print_final_stats=1
