#!/usr/bin/env bash
# Line coverage of a fuzz target's corpus over the source files it exists to exercise.
#   Fuzz/coverage.sh TARGET        e.g. Fuzz/coverage.sh hls   (after Fuzz/run.sh hls SECONDS)
#   Fuzz/coverage.sh all
# The library modules are built once more, instrumented for coverage (no sanitizer), in
# Fuzz/.build-coverage; the target is linked against them and replays its corpus once
# (-runs=0); llvm-cov then reports the lines of the target's own source files that ran.
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$script")"
target="${1:?usage: coverage.sh TARGET|all}"
all_targets=(hls attribute-list csv catalog-json uri-template slider-body played-segments progress-state catalog-store offline-library ts-demuxer adts id3)
if [[ "$target" == all ]]; then
    for each in "${all_targets[@]}"; do "$script" "$each"; done
    exit 0
fi

case "$target" in
    hls) files=(HLS/Parsing/HLSParser.swift HLS/Parsing/HLSAttributeList.swift HLS/Writing/HLSWriter.swift HLS/Model/HLSSegmentList.swift) ;;
    attribute-list) files=(HLS/Parsing/HLSAttributeList.swift) ;;
    csv) files=(Catalog/Sources/CSVReader.swift Catalog/Sources/ClassSpreadsheet.swift) ;;
    catalog-json) files=(Catalog/Sources/JSONSources.swift) ;;
    uri-template) files=(Catalog/Sources/URITemplate.swift) ;;
    slider-body) files=(SliderFlow/Wire/SliderWireFormat.swift) ;;
    played-segments) files=(Progress/Interop/PlayedSegments.swift DecimalFormatting/PlainDecimal.swift) ;;
    progress-state) files=(Progress/Persistence/ProgressFormat.swift) ;;
    catalog-store) files=(Catalog/Store/CatalogStore.swift Catalog/Store/CRC32.swift) ;;
    offline-library) files=(OfflineLessons/Library/OfflineLibrary.swift) ;;
    ts-demuxer) files=(MediaContainers/TransportStream/TransportStreamDemuxer.swift) ;;
    adts) files=(MediaContainers/Audio/ADTS.swift) ;;
    id3) files=(MediaContainers/Audio/ID3Tag.swift) ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
esac
corpus="out/$target/corpus"
[[ -d "$corpus" ]] || { echo "no corpus in Fuzz/$corpus: run Fuzz/run.sh $target first" >&2; exit 1; }

# The toolchain's own LLVM tools read the profiles its runtime writes (a system llvm may not).
toolchain="$(dirname "$(command -v swiftc)")"
profdata="$toolchain/llvm-profdata"; [[ -x "$profdata" ]] || profdata=llvm-profdata
cov="$toolchain/llvm-cov"; [[ -x "$cov" ]] || cov=llvm-cov

scratch=.build-coverage
modules=(DecimalFormatting HTTPSupport HLS MediaContainers Progress Downloads OfflineLessons Player Catalog SliderFlow)
for module in "${modules[@]}"; do
    swift build -c release --package-path .. --scratch-path "$PWD/$scratch" --target "$module" \
        -Xswiftc -sanitize=fuzzer -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping >&2
done
objects=()
for module in "${modules[@]}"; do objects+=("$scratch"/release/"$module".build/*.o); done
binary="$scratch/coverage-$target"
swiftc -O -parse-as-library -sanitize=fuzzer -profile-generate -profile-coverage-mapping \
    -I "$scratch/release/Modules" "Targets/$target/Fuzz.swift" "${objects[@]}" -o "$binary" \
    2> >(grep -v "Cannot export local symbol" >&2)

profiles="$scratch/profiles-$target"
rm -rf "$profiles" && mkdir -p "$profiles"
export SWIFT_BACKTRACE=enable=no
LLVM_PROFILE_FILE="$profiles/%p.profraw" "$binary" "$corpus" -runs=0 -max_len="${FUZZ_MAX_LEN:-8192}" \
    > "$profiles/replay.log" 2>&1
"$profdata" merge -sparse "$profiles"/*.profraw -o "$profiles/merged.profdata"
sources=()
for file in "${files[@]}"; do sources+=("$(cd .. && pwd)/Sources/$file"); done
echo "=== $target: $(find "$corpus" -type f | wc -l) corpus inputs"
printf '%-48s %8s %8s %10s\n' file lines regions functions
"$cov" report "$binary" -instr-profile="$profiles/merged.profdata" "${sources[@]}" \
    | sed 's|^/.*/Sources/||' | awk '/\.swift/ || /^TOTAL/ { printf "%-48s %8s %8s %10s\n", $1, $10, $4, $7 }'
