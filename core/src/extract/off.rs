//! What stands in for the `previews` feature when it is off: no thumbnail is drawn and no
//! audio file is read for its facts, so an asset keeps only what the contract names (type,
//! size, pages and words, an image's size).

/// Audio files are not read without `previews`.
pub(super) mod audio {
    use crate::model::Media;

    /// Nothing read of an audio file.
    #[derive(Debug, Default)]
    pub(in crate::extract) struct Audio {
        pub(in crate::extract) media: Media,
        pub(in crate::extract) cover: Option<Vec<u8>>,
    }

    /// Nothing is read.
    pub(in crate::extract) fn read(_: &[u8], _: bool) -> Audio {
        Audio::default()
    }

    /// Nothing is read.
    pub(in crate::extract) fn read_from<R>(_: R, _: bool) -> Audio {
        Audio::default()
    }
}

/// Images get no thumbnail without `previews`.
pub(super) mod raster {
    use crate::extract::{ExtractError, Limits, Thumbnail};

    /// No thumbnail.
    pub(in crate::extract) fn thumbnail(
        _: &[u8],
        _: u32,
        _: &Limits,
    ) -> Result<Option<Thumbnail>, ExtractError> {
        Ok(None)
    }

    /// No thumbnail.
    pub(in crate::extract) fn thumbnail_ranged<R>(
        _: &[u8],
        _: R,
        _: u64,
        _: u32,
        _: &Limits,
    ) -> Result<Option<Thumbnail>, ExtractError> {
        Ok(None)
    }
}
