//! Hostile PDFs: object graphs and nesting that a reader walking them by recursion would
//! follow until its thread's stack overflows, which aborts the whole process. Each is read on
//! a thread of its own with a small stack, so a regression shows as a crash of the test run;
//! files at the limits are read on a stack as large as a Tokio blocking thread's, where the
//! server reads them.

use super::*;
use crate::extract::pdf::{MAX_LENGTH_REFERENCES, MAX_NESTING, MAX_PDF_DEPTH};

/// Half the stack of a Tokio blocking thread: without the bounds, every hostile file below
/// overflows it (in a debug build; `lopdf` alone gives up nesting at 100 levels, which takes
/// more than this).
const SMALL_STACK: usize = 1024 * 1024;

/// The stack of a Tokio blocking thread, where the server runs extraction.
const SERVER_STACK: usize = 2 * 1024 * 1024;

/// Levels of the hostile files.
const DEEP: usize = 50_000;

/// Page and word counts of `pdf`, read on a new thread with `stack` bytes of stack.
fn counts_on(stack: usize, pdf: Vec<u8>) -> (Option<u64>, Option<u64>) {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let got = extract(&pdf, "hostile.pdf", Some(AssetType::Pdf), &limits())
                .expect("a PDF is always extracted");
            assert_eq!(got.mime_type, "application/pdf");
            assert_eq!(got.file_size, pdf.len() as u64);
            (got.page_count, got.word_count)
        })
        .expect("spawn")
        .join()
        .expect("extraction does not panic")
}

const UNREADABLE: (Option<u64>, Option<u64>) = (None, None);
/// The one page of four words every hostile sample has.
const READ: (Option<u64>, Option<u64>) = (Some(1), Some(4));

#[test]
fn a_deep_page_tree_is_unreadable() {
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_deep_page_tree(DEEP)),
        UNREADABLE
    );
    // The font is found through every level of the tree, up to the limit.
    let at_limit = samples::pdf_deep_page_tree(MAX_PDF_DEPTH);
    assert_eq!(counts_on(SERVER_STACK, at_limit), READ);
    let past = samples::pdf_deep_page_tree(MAX_PDF_DEPTH + 1);
    assert_eq!(counts_on(SERVER_STACK, past), UNREADABLE);
}

#[test]
fn a_deep_parent_chain_is_unreadable() {
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_deep_parent_chain(DEEP)),
        UNREADABLE
    );
    let at_limit = samples::pdf_deep_parent_chain(MAX_PDF_DEPTH);
    assert_eq!(counts_on(SERVER_STACK, at_limit), READ);
    let past = samples::pdf_deep_parent_chain(MAX_PDF_DEPTH + 1);
    assert_eq!(counts_on(SERVER_STACK, past), UNREADABLE);
}

#[test]
fn a_looping_page_tree_is_unreadable() {
    // Read as it is, the loop lists the one page again and again.
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_page_tree_loop()),
        UNREADABLE
    );
    // A /Parent chain that loops, in a tree that does not.
    let mut doc = samples::build_pdf(1, 3);
    let page = *doc.get_pages().values().next().expect("a page");
    let root = doc
        .get_dictionary(page)
        .and_then(|p| p.get(b"Parent"))
        .and_then(Object::as_reference)
        .expect("a parent");
    doc.get_dictionary_mut(root)
        .expect("the root")
        .set("Parent", page);
    assert_eq!(counts_on(SMALL_STACK, save(&mut doc)), UNREADABLE);
}

#[test]
fn deep_outlines_are_not_walked() {
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_deep_outlines(DEEP)),
        READ
    );
}

#[test]
fn deeply_nested_arrays_are_unreadable() {
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_deep_arrays(DEEP)),
        UNREADABLE
    );
    let at_limit = samples::pdf_deep_arrays(MAX_NESTING);
    assert_eq!(counts_on(SERVER_STACK, at_limit), READ);
    let past = samples::pdf_deep_arrays(MAX_NESTING + 1);
    assert_eq!(counts_on(SERVER_STACK, past), UNREADABLE);
}

#[test]
fn deeply_nested_dictionaries_are_unreadable() {
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_deep_dictionaries(DEEP)),
        UNREADABLE
    );
    let at_limit = samples::pdf_deep_dictionaries(MAX_NESTING);
    assert_eq!(counts_on(SERVER_STACK, at_limit), READ);
    let past = samples::pdf_deep_dictionaries(MAX_NESTING + 1);
    assert_eq!(counts_on(SERVER_STACK, past), UNREADABLE);
}

#[test]
fn nesting_inside_an_object_stream_counts() {
    // Compressed in an object stream, the nesting is not in the file's bytes as written.
    let nested = |levels: usize| {
        let mut doc = samples::build_pdf(1, 3);
        let mut value = Object::Array(Vec::new());
        for _ in 1..levels {
            value = Object::Array(vec![value]);
        }
        doc.add_object(value);
        let mut pdf = Vec::new();
        doc.save_modern(&mut pdf).expect("save");
        assert!(
            pdf.windows(6).any(|w| w == b"ObjStm"),
            "object streams used"
        );
        pdf
    };
    let at_limit = nested(MAX_NESTING);
    assert_eq!(counts_on(SERVER_STACK, at_limit), (Some(1), Some(3)));
    let past = nested(MAX_NESTING + 1);
    assert_eq!(counts_on(SERVER_STACK, past), UNREADABLE);
}

#[test]
fn a_chain_of_length_references_is_unreadable() {
    // A thousand is enough to overflow the small stack; far more would make the pre-scan's
    // measure of streams of unknown length refuse the file anyway.
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_length_chain(1_000)),
        UNREADABLE
    );
    let at_limit = samples::pdf_length_chain(MAX_LENGTH_REFERENCES);
    assert_eq!(counts_on(SERVER_STACK, at_limit), READ);
    let past = samples::pdf_length_chain(MAX_LENGTH_REFERENCES + 1);
    assert_eq!(counts_on(SERVER_STACK, past), UNREADABLE);
}

#[test]
fn a_loop_of_length_references_is_unreadable() {
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_length_loop()),
        UNREADABLE
    );
    // A length stored in an object stream, as writers may do, is read.
    assert_eq!(
        counts_on(SMALL_STACK, samples::pdf_length_in_object_stream()),
        READ
    );
}
