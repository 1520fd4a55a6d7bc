//! `assetlib-pdf-render`: draws page 1 of a PDF as a child process of a server, bounded in
//! time and memory, and nothing else (see [`assetlib::extract::PdfRenderer`]).
//!
//! A server that does not draw its PDFs with its own program names this one:
//!
//! ```text
//! config.extract_limits.pdf_renderer = PdfRenderer::Child {
//!     program: "/usr/local/bin/assetlib-pdf-render".into(),
//! };
//! ```

// The package's other dependencies (adapters, stores) are not this program's.
#![allow(unused_crate_dependencies)]

use std::process::ExitCode;

fn main() -> ExitCode {
    assetlib::extract::pdf_render_child().unwrap_or_else(|| {
        eprintln!(
            "assetlib-pdf-render is run by a server as `assetlib-pdf-render {} MAX_SIDE \
             MEMORY_BYTES CPU_SECONDS`, with a PDF on its standard input",
            assetlib::extract::PDF_RENDER_ARG
        );
        ExitCode::from(2)
    })
}
