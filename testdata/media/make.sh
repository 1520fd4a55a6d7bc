#!/usr/bin/env bash
# Makes the small media corpus the preview tests read, and `ffprobe.json`, what `ffprobe`
# reports of each file. The files are committed, so the test command needs no ffmpeg; run this
# again (Debian: `apt-get install ffmpeg`) only to change the corpus.
#
#   testdata/media/make.sh            # writes the files next to this script
set -euo pipefail
cd "$(dirname "$0")"
command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || {
  echo "make.sh needs ffmpeg and ffprobe (Debian: apt-get install ffmpeg)" >&2
  exit 1
}

ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }
picture=(-f lavfi -i "testsrc=duration=2:size=160x120:rate=15")
sound=(-f lavfi -i "sine=frequency=440:duration=2.5:sample_rate=44100")
rm -f ./*.mp4 ./*.mov ./*.webm ./*.mkv ./*.mp3 ./*.flac ./*.ogg ./*.opus ./*.m4a ./cover.png

# Video: H.264, HEVC, VP9 and AV1 in MP4, QuickTime, WebM and Matroska.
ff "${picture[@]}" -c:v libx264 -preset veryfast -pix_fmt yuv420p h264.mp4
ff "${picture[@]}" -c:v libx264 -preset veryfast -pix_fmt yuv420p -movflags +faststart h264-faststart.mp4
ff "${picture[@]}" "${sound[@]}" -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -b:a 64k -shortest h264-aac.mp4
ff -i h264.mp4 -c copy -metadata:s:v:0 rotate=90 h264-rotated.mov
ff "${picture[@]}" -c:v libx265 -preset ultrafast -tag:v hvc1 -x265-params log-level=none hevc.mov
ff "${picture[@]}" -c:v libvpx-vp9 -b:v 100k -deadline realtime vp9.webm
ff "${picture[@]}" -c:v libaom-av1 -cpu-used 8 -b:v 100k av1.mp4
ff "${picture[@]}" -c:v libaom-av1 -cpu-used 8 -b:v 100k av1.webm
ff "${picture[@]}" "${sound[@]}" -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a libvorbis -shortest h264-vorbis.mkv

# Audio: MP3, FLAC, Ogg Vorbis and Opus, M4A/AAC; with and without cover art.
ff -f lavfi -i "testsrc=size=64x64" -frames:v 1 cover.png
ff "${sound[@]}" -c:a libmp3lame -b:a 128k sine.mp3
ff "${sound[@]}" -i cover.png -map 0 -map 1 -c:a libmp3lame -b:a 128k -c:v png -id3v2_version 3 \
  -disposition:v attached_pic sine-cover.mp3
ff "${sound[@]}" -c:a flac sine.flac
ff "${sound[@]}" -i cover.png -map 0 -map 1 -c:a flac -c:v png -disposition:v attached_pic sine-cover.flac
ff "${sound[@]}" -c:a libvorbis sine.ogg
ff "${sound[@]}" -c:a libopus -b:a 64k sine.opus
ff "${sound[@]}" -c:a aac -b:a 96k sine.m4a
ff "${sound[@]}" -i cover.png -map 0 -map 1 -c:a aac -b:a 96k -c:v png -disposition:v attached_pic sine-cover.m4a

# What ffprobe reports: the format's duration, and each stream's codec, size and rotation.
{
  echo "{"
  first=1
  for f in *.mp4 *.mov *.webm *.mkv *.mp3 *.flac *.ogg *.opus *.m4a; do
    [[ $first == 1 ]] || echo ","
    first=0
    printf '"%s": ' "$f"
    ffprobe -v error -print_format json -show_format -show_streams "$f" |
      python3 -c '
import json, sys
p = json.load(sys.stdin)
out = {"duration": float(p["format"]["duration"])}
for s in p["streams"]:
    if s["codec_type"] == "video" and not s.get("disposition", {}).get("attached_pic"):
        rotation = 0
        for d in s.get("side_data_list", []):
            rotation = int(d.get("rotation", rotation))
        rotation = int(s.get("tags", {}).get("rotate", rotation))
        out.update(width=s["width"], height=s["height"], codec=s["codec_name"], rotation=rotation)
    if s["codec_type"] == "audio":
        out.update(sample_rate=int(s["sample_rate"]), channels=s["channels"])
print(json.dumps(out, sort_keys=True), end="")'
  done
  echo
  echo "}"
} > ffprobe.json
ls -l
