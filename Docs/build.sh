#!/usr/bin/env bash
# Builds every module's DocC documentation with the toolchain alone: no package plugin.
#   Docs/build.sh                          archives in .build-docs/archives/MODULE.doccarchive
#   Docs/build.sh --static                 static HTML sites (docc's static hosting) in .build-docs/sites/MODULE
#   Docs/build.sh --from-build .build/debug  the symbol graphs read from a build already made
# Without --from-build, SwiftPM builds the package afresh in its own scratch directory (the main
# build is untouched), emitting each module's symbol graph as it compiles it (about 2 minutes
# on two cores). With it, swift-symbolgraph-extract reads each module's graph from the
# .swiftmodule and .swiftdoc files of that build (a second or two per module): CI passes its
# own debug build, so DocC costs no build of its own. `docc convert` then joins each module's
# graph with its catalog, Sources/MODULE/MODULE.docc. Any DocC warning (an unresolved ``link``,
# a missing article) fails the script. Symbols compiled only on Apple platforms (the
# AVFoundation adapter) are absent from a Linux build's documentation, so the articles name
# them in code font, not as links.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-docs
static=false
from_build=""
while [ $# -gt 0 ]; do
    case "$1" in
        --static) static=true ;;
        --from-build) from_build="${2:?--from-build needs a build folder, e.g. .build/debug}"; shift ;;
        *) echo "usage: Docs/build.sh [--static] [--from-build BUILD_FOLDER]" >&2; exit 2 ;;
    esac
    shift
done

rm -rf "$scratch" && mkdir -p "$scratch/archives"
graphs="$PWD/$scratch/symbol-graphs"
mkdir -p "$graphs"
if [ -n "$from_build" ]; then
    modules_dir="$from_build/Modules"
    [ -d "$modules_dir" ] || { echo "Docs/build.sh: no $modules_dir: build the package first" >&2; exit 2; }
    triple=$(swiftc -print-target-info | python3 -c 'import json,sys; print(json.load(sys.stdin)["target"]["triple"])')
    # The options the compiler's own -emit-symbol-graph uses: public symbols, extensions of
    # other modules' types in MODULE@Other files.
    for catalog in Sources/*/*.docc; do
        module=$(basename "$catalog" .docc)
        swift-symbolgraph-extract -module-name "$module" -I "$modules_dir" -target "$triple" \
            -minimum-access-level public -skip-inherited-docs -output-dir "$graphs" >>"$scratch/extract.log" 2>&1 ||
            { echo "Docs/build.sh: no symbol graph for $module from $modules_dir:" >&2
              tail -n 20 "$scratch/extract.log" >&2; exit 1; }
    done
else
    # A fresh build: an up-to-date module would be skipped and emit no graph.
    swift build --scratch-path "$scratch" \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs" >"$scratch/build.log" 2>&1 ||
        { tail -n 40 "$scratch/build.log" >&2; exit 1; }
fi

status=0
for catalog in Sources/*/*.docc; do
    module=$(basename "$catalog" .docc)
    module_graphs="$scratch/graphs-$module"
    rm -rf "$module_graphs" && mkdir -p "$module_graphs"
    # The module's own graph and its extensions of other modules' types (MODULE@Other).
    cp "$graphs/$module.symbols.json" "$module_graphs/"
    find "$graphs" -name "$module@*.symbols.json" -exec cp {} "$module_graphs/" \;
    options=(--additional-symbol-graph-dir "$module_graphs" --fallback-display-name "$module"
        --fallback-bundle-identifier "org.mediacore.$module" --warnings-as-errors)
    if $static; then
        mkdir -p "$scratch/sites"
        options+=(--transform-for-static-hosting --hosting-base-path "$module"
            --output-path "$scratch/sites/$module")
    else
        options+=(--output-path "$scratch/archives/$module.doccarchive")
    fi
    if docc convert "$catalog" "${options[@]}" >"$scratch/docc-$module.log" 2>&1; then
        echo "$module: documentation built with no warnings"
    else
        echo "$module: DocC reported problems:" >&2
        grep -E -A4 'warning|error' "$scratch/docc-$module.log" | head -n 40 >&2
        status=1
    fi
done
exit $status
