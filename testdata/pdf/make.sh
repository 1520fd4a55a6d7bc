#!/usr/bin/env bash
# Makes the PDF the renderer is checked against `pdftoppm` with, and that reference.
#
# `ltnews18.pdf` is "LaTeX News, Issue 18" by the LaTeX Project (distributed under the LaTeX
# Project Public License, unchanged), as Debian's `texlive-latex-base-doc` ships it: one
# letter page of small text in embedded Type 1 fonts, so both renderers draw the same glyph
# outlines. `ltnews18-pdftoppm.png` is page 1 as Debian's `poppler-utils` (22.12) renders it
# at 320 pixels on the long side. Both are committed, so the test command needs neither
# package; run this again (Debian: `apt-get install texlive-latex-base-doc poppler-utils`)
# only to change them.
#
#   testdata/pdf/make.sh            # writes the files next to this script
set -euo pipefail
cd "$(dirname "$0")"
source=/usr/share/doc/texlive-doc/latex/base/ltnews18.pdf
command -v pdftoppm >/dev/null && [ -f "$source" ] || {
  echo "make.sh needs pdftoppm and $source (Debian: apt-get install poppler-utils texlive-latex-base-doc)" >&2
  exit 1
}
cp "$source" ltnews18.pdf
pdftoppm -f 1 -l 1 -scale-to 320 -png -singlefile ltnews18.pdf ltnews18-pdftoppm
