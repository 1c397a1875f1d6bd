#!/usr/bin/env bash
# Builds the DocC archives of Moya, CombineMoya and MoyaTesting, treating DocC warnings (unresolved symbol
# links included) as errors:
#
#     bash scripts/build-documentation.sh [-Xswiftc FLAG ...]
#
# The archives go to .build/documentation/. Arguments are passed to `swift build`; give the ones
# of your last build (CI passes none) and nothing is compiled again.
#
# Why not `swift package generate-documentation`: SwiftPM 6.3 builds symbol graphs for a plugin
# with every package trait enabled, so that command resolves RxSwift and ReactiveSwift, the
# dependencies of the opt-in RxMoya and ReactiveMoya traits, even when no trait is enabled. With
# network access it works (and documents those modules too); offline it fails. This script does
# the same work from the plain build: swift-symbolgraph-extract reads the built modules, and
# docc converts each catalog with its module's symbol graph.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build --target CombineMoya "$@"
swift build --target MoyaTesting "$@"
bin="$(swift build --show-bin-path "$@")"
triple="$(basename "$(dirname "$bin")")"
out=.build/documentation
rm -rf "$out"
mkdir -p "$out"

# What the compiler needs to load the modules: the built Swift modules, and the module map and
# headers of every C target in the build (generated ones, or the package's own).
args=(-I "$bin/Modules")
for map in "$bin"/*.build/module.modulemap; do
    args+=(-Xcc "-fmodule-map-file=$map")
done
while IFS= read -r include; do
    target="$(basename "$(dirname "$include")")"
    [ -d "$bin/$target.build" ] || continue
    args+=(-Xcc "-I$include")
    if [ -f "$include/module.modulemap" ]; then
        args+=(-Xcc "-fmodule-map-file=$include/module.modulemap")
    fi
done < <(find .build/checkouts -path '*/Sources/*/include' -type d 2>/dev/null)

for module in Moya CombineMoya MoyaTesting; do
    graphs="$out/symbol-graphs/$module"
    mkdir -p "$graphs"
    swift-symbolgraph-extract -module-name "$module" -target "$triple" "${args[@]}" \
        -minimum-access-level public -skip-inherited-docs -emit-extension-block-symbols -output-dir "$graphs"
    docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors
    echo "$out/$module.doccarchive"
done
