"""Schemathesis hooks for .ci/schemathesis.sh (loaded through SCHEMATHESIS_HOOKS).

A tus `PATCH` (and a creation with its first bytes) sends raw bytes as
`application/offset+octet-stream`, a media type schemathesis has no generator for: its bodies
are drawn here as bytes, up to 4 KiB.
"""
from hypothesis import strategies as st

import schemathesis

schemathesis.openapi.media_type(
    "application/offset+octet-stream", st.binary(max_size=4096)
)
