//! Tests of the pre-scan.

use super::*;

fn dict(text: &[u8]) -> Option<Dict> {
    let mut lexer = Lexer { s: text, pos: 0 };
    match lexer.value(0)? {
        Value::Dict(d) => Some(Dict(d)),
        _ => None,
    }
}

#[test]
fn stream_dictionaries_parse_as_a_pdf_reader_reads_them() {
    let d = dict(
        br"<< /Type /XRef /Filter [/ASCII85Decode /Fl#61teDecode] /Length 12 0 R
              /W [1 2 1] % a comment
              /DecodeParms << /Columns 5 /Filter /Ignored >> /S (a (nested) \) string) /H <0A>
              /Flag true /Size 7 >>",
    )
    .expect("parses");
    assert_eq!(d.name(b"Type"), Some(b"XRef".as_slice()));
    assert_eq!(
        d.filters(),
        vec![b"ASCII85Decode".to_vec(), b"FlateDecode".to_vec()]
    );
    assert_eq!(d.get(b"Length"), Some(&Value::Ref(12)));
    assert_eq!(d.get(b"Size"), Some(&Value::Int(7)));
    assert_eq!(
        d.get(b"W"),
        Some(&Value::Array(vec![
            Value::Int(1),
            Value::Int(2),
            Value::Int(1)
        ]))
    );
    assert!(dict(b"<< /Filter >>").is_none());
    assert!(dict(b"<< /A [1 2").is_none());
    let deep = format!("<< /A {}{} >>", "[".repeat(64), "]".repeat(64));
    assert!(dict(deep.as_bytes()).is_none(), "nesting is bounded");
}

#[test]
fn nesting_is_measured_outside_strings_comments_names_and_streams() {
    let deep = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let within = |text: &str| nesting_within(text.as_bytes(), 4);
    assert!(within(&format!("1 0 obj\n{}\nendobj", deep(4))));
    assert!(!within(&format!("1 0 obj\n{}\nendobj", deep(5))));
    assert!(!within("1 0 obj << /A [ << /B [ [ 1 ] ] >> ] >> endobj"));
    assert!(within("1 0 obj << /A [ << /B [ 1 ] >> ] >> endobj"));
    // Strings, hex strings, comments and stream data are not parsed as objects.
    assert!(within(&format!("1 0 obj ({}) endobj", deep(9))));
    assert!(within(r"1 0 obj (\( [[[[[ ) endobj"));
    assert!(within("1 0 obj <5B5B5B5B5B> endobj"));
    assert!(within(&format!("% {}\n1 0 obj [] endobj", "[".repeat(9))));
    let stream = format!("1 0 obj << >>\nstream\n{}\nendstream endobj", "[".repeat(9));
    assert!(within(&stream));
    // Each object starts again, whatever a broken one left open; a name is no keyword.
    assert!(within("1 0 obj [[[ endobj 2 0 obj [[[ endobj"));
    assert!(!within("1 0 obj [[[ /obj [[ endobj"));
    // Past an unmatched closing bracket, depth counts from nothing again.
    assert!(within("1 0 obj ]]]] [[[[ endobj"));
}

#[test]
fn object_numbers_are_every_tail_of_the_header() {
    assert_eq!(object_numbers(b"\n12 0 "), vec![2, 12]);
    assert_eq!(object_numbers(b"7 0\r\n"), vec![7]);
    assert_eq!(object_numbers(b"x0105 3 "), vec![5, 105]);
    assert_eq!(
        object_numbers(b"99999999999 0 "),
        vec![
            9,
            99,
            999,
            9999,
            99999,
            999_999,
            9_999_999,
            99_999_999,
            999_999_999
        ]
    );
    assert_eq!(object_numbers(b"0 "), Vec::<u32>::new());
    assert_eq!(object_numbers(b"12 % c\n0 "), Vec::<u32>::new());
}

#[test]
fn cross_reference_streams_are_read_through_their_predictor() {
    use std::io::Write;
    // Objects 2 and 3 in object stream 9; 1 at offset 16; PNG "up" rows, deflated.
    let rows: [[u8; 4]; 4] = [[0, 0, 0, 0], [1, 0, 16, 0], [2, 0, 9, 0], [2, 0, 9, 1]];
    let mut previous = [0u8; 4];
    let mut predicted = Vec::new();
    for row in rows {
        predicted.push(2);
        for (byte, above) in row.iter().zip(previous) {
            predicted.push(byte.wrapping_sub(above));
        }
        previous = row;
    }
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&predicted).expect("deflate");
    let data = encoder.finish().expect("deflate");
    let d = dict(
        b"<< /Type /XRef /Size 4 /W [1 2 1] /Filter /FlateDecode \
           /DecodeParms << /Columns 4 /Predictor 12 >> >>",
    )
    .expect("parses");
    let xref = XrefStream::new(&d).expect("a cross-reference stream");
    let content = lopdf_decoded(&d, &data).expect("lopdf decodes it");
    let mut found = Vec::new();
    xref.compressed(&content, |object, container| {
        found.push((object, container))
    });
    assert_eq!(found, vec![(2, 9), (3, 9)]);
}

#[test]
fn length_references_are_followed_to_the_limit() {
    let chain =
        |links: u32| -> Vec<(Vec<u32>, u32)> { (1..=links).map(|n| (vec![n], n + 1)).collect() };
    let limit = u32::try_from(MAX_LENGTH_REFERENCES).expect("small");
    assert!(length_references_bounded(&chain(limit), &[]));
    assert!(!length_references_bounded(&chain(limit + 1), &[]));
    assert!(!length_references_bounded(
        &[(vec![1], 2), (vec![2], 1)],
        &[]
    ));
    // Through a container: object 2 is stored in stream 1, whose length is object 2.
    let xref = XrefStream {
        widths: [1, 1, 1],
        sections: vec![(2, 1)],
    };
    let stored_in_1 = vec![2, 1, 0];
    assert!(!length_references_bounded(
        &[(vec![1], 2)],
        &[(xref, stored_in_1)]
    ));
    let xref = XrefStream {
        widths: [1, 1, 1],
        sections: vec![(2, 1)],
    };
    assert!(length_references_bounded(
        &[(vec![5], 2)],
        &[(xref, vec![2, 1, 0])]
    ));
}

#[test]
fn stream_keywords_are_told_from_text() {
    let at = |s: &[u8]| {
        let i = memmem::find(s, b"stream").expect("has stream");
        stream_keyword(s, i)
    };
    assert_eq!(at(b">>\nstream\r\nDATA"), Some(11));
    assert_eq!(at(b">> stream\nDATA"), Some(10));
    assert_eq!(at(b">> %comment\n  stream\nDATA"), Some(21));
    assert_eq!(at(b"(a stream\nof text)"), None);
    assert_eq!(at(b">>\nstreamed"), None);
    assert_eq!(at(b"endstream\n"), None);
}

#[test]
fn decoding_stops_at_the_cap() {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&vec![0u8; 1 << 20]).expect("deflate");
    let bomb = encoder.finish().expect("deflate");
    let flate = [b"FlateDecode".to_vec()];
    assert_eq!(decoded_len(&bomb, &flate, 1 << 20), Some(1 << 20));
    assert_eq!(decoded_len(&bomb, &flate, (1 << 20) - 1), None);
    assert_eq!(
        decoded_len(b"zzzz~>", &[b"ASCII85Decode".to_vec()], 16),
        Some(16)
    );
    assert_eq!(
        decoded_len(b"zzzzz~>", &[b"ASCII85Decode".to_vec()], 16),
        None
    );
    // Filters lopdf does not decode stop the measuring.
    assert_eq!(decoded_len(b"raw", &[b"DCTDecode".to_vec()], 1), Some(3));
}
