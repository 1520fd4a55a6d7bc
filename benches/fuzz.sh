#!/usr/bin/env bash
# Fuzzes the file readers for SECONDS (default 60) each, on nightly Rust with cargo-fuzz
# (libFuzzer, AddressSanitizer): `video_info` (MP4/QuickTime and WebM/Matroska probes),
# `pdf` (pre-scan, counts and page 1 render, in the bounded render child, of bytes declared
# a PDF), `preview` (every format), `preview_ranged` (every format read by ranges, as a file
# larger than max_upload is) and `image` (image variants: decoding, a JPEG's reduced
# decoding, resizing and encoding). Not part of the test command: run it nightly, or before
# a release.
#
#   bash benches/fuzz.sh [SECONDS]
#
# Sets itself up: cargo-fuzz, pinned, into target/tools/cargo-fuzz (from crates.io); the
# nightly toolchain must be installed (`rustup toolchain install nightly`). Each target starts
# from a seed corpus: the committed media files (testdata/media), the PDFs Debian ships
# under /usr/share/doc, and small pictures ffmpeg draws (JPEG 4:2:0, greyscale and 4:4:4, PNG
# with alpha, GIF, WebP; Debian's ffmpeg or the static one `cargo xtask setup` installs). A crash leaves its input under fuzz/artifacts/TARGET/ and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
tools="$PWD/target/tools/cargo-fuzz"
version="0.13.1"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz.sh needs the nightly toolchain: rustup toolchain install nightly" >&2
  exit 1
fi
if [[ "$("$tools/bin/cargo-fuzz" --version 2>/dev/null || true)" != *"$version"* ]]; then
  echo "fuzz.sh: installing cargo-fuzz $version into $tools"
  cargo install --quiet --locked --root "$tools" cargo-fuzz --version "$version"
fi

seed() {
  local dir="fuzz/corpus/$1"
  mkdir -p "$dir"
  shift
  for f in "$@"; do
    case "$f" in
      *.gz) gzip -dc "$f" > "$dir/$(basename "${f%.gz}")" 2>/dev/null || true ;;
      *) cp "$f" "$dir/" ;;
    esac
  done
}
shopt -s nullglob
media=(testdata/media/*.mp4 testdata/media/*.mov testdata/media/*.webm testdata/media/*.mkv)
audio=(testdata/media/*.mp3 testdata/media/*.flac testdata/media/*.ogg testdata/media/*.opus testdata/media/*.m4a)
mapfile -t pdfs < <(find /usr/share/doc -name '*.pdf' -size -2M | head -40; find /usr/share/doc -name '*.pdf.gz' -size -2M | head -10)
seed video_info "${media[@]}"
# Pages that never finish drawing (testdata/fuzz/pdf-*.pdf, from extract::samples::runaway_pdfs)
# are drawn by the render child, as a server draws them: bounded in time and memory.
runaway=(testdata/fuzz/pdf-*.pdf)
seed pdf "${pdfs[@]}" "${runaway[@]}"
cargo build --quiet --release --bin assetlib-pdf-render
export ASSETLIB_PDF_RENDER="$PWD/target/release/assetlib-pdf-render"
seed preview "${media[@]}" "${audio[@]}" "${pdfs[@]}" testdata/media/cover.png
seed preview_ranged "${audio[@]}" "${pdfs[@]}" testdata/media/cover.png

ffmpeg_bin=$(command -v ffmpeg || ls target/tools/ffmpeg/lib/python3*/site-packages/imageio_ffmpeg/binaries/ffmpeg-* 2>/dev/null | head -1 || true)
if [[ -z "$ffmpeg_bin" ]]; then
  echo "fuzz.sh needs ffmpeg to draw the image seeds: apt-get install ffmpeg, or cargo xtask setup" >&2
  exit 1
fi
mkdir -p fuzz/corpus/image
draw() { # NAME PICK SIZE [ffmpeg output options...]: PICK, the input's first byte, picks the
  # variant's box, fit and encoding.
  local name="$1" pick="$2" size="$3"
  shift 3
  local out="fuzz/corpus/image/$name"
  printf "\\$(printf %03o "$pick")" > "$out"
  "$ffmpeg_bin" -v error -f lavfi -i "testsrc2=s=$size" -frames:v 1 "$@" -f image2pipe - >> "$out"
}
draw yuv420.jpg 0 640x480 -c:v mjpeg -q:v 3
draw grey.jpg 5 333x251 -c:v mjpeg -pix_fmt gray
draw yuv444.jpg 18 1001x751 -c:v mjpeg -pix_fmt yuvj444p
draw rgba.png 33 300x200 -c:v png -pix_fmt rgba
draw animated.gif 2 120x90 -c:v gif
draw lossy.webp 41 400x300 -c:v libwebp
{ printf '\001'; cat testdata/media/cover.png; } > fuzz/corpus/image/cover.png

# A fallible reservation that fails is an error the readers handle (mp4parse reserves by the
# counts a file declares, with try_reserve), as it is outside the fuzzer: let the allocator
# say no instead of aborting. What must stay bounded is resident memory: -rss_limit_mb.
export ASAN_OPTIONS="allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
status=0
for target in video_info pdf preview preview_ranged image; do
  echo "== fuzz $target for ${seconds}s"
  if ! (cd fuzz && PATH="$tools/bin:$PATH" cargo +nightly fuzz run "$target" -- \
      -max_total_time="$seconds" -rss_limit_mb=3072 -malloc_limit_mb=1048576 -timeout=20 -print_final_stats=1 2>&1 |
      grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|Done)'); then
    status=1
  fi
  if compgen -G "fuzz/artifacts/$target/*" >/dev/null; then
    echo "fuzz $target: crash inputs in fuzz/artifacts/$target/" >&2
    status=1
  fi
done
exit $status
