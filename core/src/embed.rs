//! `video_embed`: the embeddable address of an external video, derived from its URL.
//!
//! | host | accepted forms | embed |
//! |---|---|---|
//! | YouTube | `watch?v=`, `youtu.be/`, `/shorts/`, `/embed/`, `/live/`, `/v/` (www, m, music, nocookie) | `https://www.youtube.com/embed/ID` (`t=`/`start=` -> `?start=SECONDS`) |
//! | Vimeo | `vimeo.com/ID`, `vimeo.com/ID/HASH`, `/channels/*/ID`, `/groups/*/videos/ID`, `player.vimeo.com/video/ID` | `https://player.vimeo.com/video/ID` (`?h=HASH` kept) |
//! | Loom | `/share/ID`, `/embed/ID` | `https://www.loom.com/embed/ID` |
//! | Wistia | `*.wistia.com/medias/ID`, `*.wi.st/medias/ID`, `fast.wistia.net/embed/iframe/ID`, `fast.wistia.com/embed/medias/ID` | `https://fast.wistia.net/embed/iframe/ID` |
//! | Dailymotion | `/video/ID`, `dai.ly/ID` (only with `Config::dailymotion_player_id`) | `https://geo.dailymotion.com/player/PLAYER.html?video=ID` |
//! | any | a direct file ending `.mp4`, `.webm`, `.mov`, `.m3u8` | the URL itself |
//!
//! Anything else is 400 on field `external_url`.

use url::Url;

use crate::config::Config;
use crate::error::ApiError;

/// Derives `video_embed` from an already validated http(s) URL.
pub fn video_embed(url: &Url, config: &Config) -> Result<String, ApiError> {
    let host = url.host_str().unwrap_or("").to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    let segments: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|x| !x.is_empty()).collect())
        .unwrap_or_default();
    let found = match host {
        "youtube.com"
        | "m.youtube.com"
        | "music.youtube.com"
        | "youtube-nocookie.com"
        | "youtu.be" => youtube(url, host, &segments),
        "vimeo.com" | "player.vimeo.com" => vimeo(url, &segments),
        "loom.com" => match segments.as_slice() {
            ["share" | "embed", id] if is_token(id) => {
                Some(format!("https://www.loom.com/embed/{id}"))
            }
            _ => None,
        },
        "fast.wistia.net" | "fast.wistia.com" => match segments.as_slice() {
            ["embed", "iframe" | "medias", id] if is_token(id) => Some(wistia(id)),
            _ => None,
        },
        h if h.ends_with(".wistia.com") || h.ends_with(".wi.st") => match segments.as_slice() {
            ["medias", id] if is_token(id) => Some(wistia(id)),
            _ => None,
        },
        "dailymotion.com" | "dai.ly" => {
            let id = match (host, segments.as_slice()) {
                ("dai.ly", [id]) => Some(*id),
                ("dailymotion.com", ["video" | "embed", id]) => Some(*id),
                ("dailymotion.com", ["embed", "video", id]) => Some(*id),
                _ => None,
            }
            .filter(|id| is_token(id));
            match (id, config.dailymotion_player_id.as_deref()) {
                (Some(id), Some(player)) => Some(format!(
                    "https://geo.dailymotion.com/player/{player}.html?video={id}"
                )),
                (Some(_), None) => {
                    return Err(ApiError::validation(
                        "external_url",
                        "Dailymotion videos can be embedded only when the service is configured \
                         with a Dailymotion player id",
                    ));
                }
                (None, _) => None,
            }
        }
        _ => None,
    };
    if let Some(embed) = found {
        return Ok(embed);
    }
    if is_direct_video(url) {
        return Ok(url.as_str().to_owned());
    }
    Err(ApiError::validation(
        "external_url",
        "external_url is not a video address that can be embedded: use a YouTube, Vimeo, Loom, \
         Wistia or Dailymotion link, or a direct .mp4, .webm, .mov or .m3u8 file",
    ))
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn is_youtube_id(s: &str) -> bool {
    s.len() == 11 && is_token(s)
}

fn query<'a>(url: &'a Url, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn youtube(url: &Url, host: &str, segments: &[&str]) -> Option<String> {
    let id = if host == "youtu.be" {
        match segments {
            [id] => Some((*id).to_owned()),
            _ => None,
        }
    } else {
        match segments {
            ["watch"] => query(url, "v").map(|v| v.into_owned()),
            ["shorts" | "embed" | "live" | "v", id] => Some((*id).to_owned()),
            _ => None,
        }
    }
    .filter(|id| is_youtube_id(id))?;
    let start = query(url, "t")
        .or_else(|| query(url, "start"))
        .and_then(|t| start_seconds(&t))
        .filter(|s| *s > 0);
    Some(match start {
        Some(s) => format!("https://www.youtube.com/embed/{id}?start={s}"),
        None => format!("https://www.youtube.com/embed/{id}"),
    })
}

/// `90`, `90s`, `1m30s`, `1h2m3s` -> seconds.
fn start_seconds(t: &str) -> Option<u64> {
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().ok();
    }
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
        let n: u64 = number.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        number.clear();
    }
    number.is_empty().then_some(total)
}

fn vimeo(url: &Url, segments: &[&str]) -> Option<String> {
    let numeric = |s: &&str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (id, path_hash) = match segments {
        ["video", id] if numeric(id) => (*id, None),
        [id] if numeric(id) => (*id, None),
        [id, hash] if numeric(id) && is_token(hash) => (*id, Some(*hash)),
        ["channels", _, id] if numeric(id) => (*id, None),
        ["groups", _, "videos", id] if numeric(id) => (*id, None),
        _ => return None,
    };
    let hash = path_hash
        .map(str::to_owned)
        .or_else(|| query(url, "h").map(|h| h.into_owned()))
        .filter(|h| is_token(h));
    Some(match hash {
        Some(h) => format!("https://player.vimeo.com/video/{id}?h={h}"),
        None => format!("https://player.vimeo.com/video/{id}"),
    })
}

fn wistia(id: &str) -> String {
    format!("https://fast.wistia.net/embed/iframe/{id}")
}

fn is_direct_video(url: &Url) -> bool {
    let path = url.path().to_ascii_lowercase();
    [".mp4", ".webm", ".mov", ".m3u8"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embed(u: &str) -> Result<String, ApiError> {
        video_embed(&Url::parse(u).unwrap(), &Config::default())
    }

    fn ok(u: &str) -> String {
        embed(u).unwrap_or_else(|e| panic!("{u}: {e}"))
    }

    #[test]
    fn youtube_forms() {
        let want = "https://www.youtube.com/embed/dQw4w9WgXcQ";
        for u in [
            "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
            "https://youtube.com/watch?feature=share&v=dQw4w9WgXcQ",
            "https://m.youtube.com/watch?v=dQw4w9WgXcQ",
            "http://youtu.be/dQw4w9WgXcQ",
            "https://youtu.be/dQw4w9WgXcQ?si=abc",
            "https://www.youtube.com/shorts/dQw4w9WgXcQ",
            "https://www.youtube.com/embed/dQw4w9WgXcQ",
            "https://www.youtube.com/live/dQw4w9WgXcQ?feature=share",
            "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ",
            "https://music.youtube.com/watch?v=dQw4w9WgXcQ",
        ] {
            assert_eq!(ok(u), want, "{u}");
        }
    }

    #[test]
    fn youtube_start_times() {
        let base = "https://www.youtube.com/embed/dQw4w9WgXcQ";
        assert_eq!(
            ok("https://youtu.be/dQw4w9WgXcQ?t=42"),
            format!("{base}?start=42")
        );
        assert_eq!(
            ok("https://youtu.be/dQw4w9WgXcQ?t=42s"),
            format!("{base}?start=42")
        );
        assert_eq!(
            ok("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1m30s"),
            format!("{base}?start=90")
        );
        assert_eq!(
            ok("https://youtu.be/dQw4w9WgXcQ?t=1h2m3s"),
            format!("{base}?start=3723")
        );
        assert_eq!(
            ok("https://www.youtube.com/embed/dQw4w9WgXcQ?start=15"),
            format!("{base}?start=15")
        );
        assert_eq!(ok("https://youtu.be/dQw4w9WgXcQ?t=0"), base);
        assert_eq!(ok("https://youtu.be/dQw4w9WgXcQ?t=soon"), base);
    }

    #[test]
    fn youtube_bad_ids_are_refused() {
        for u in [
            "https://www.youtube.com/watch?v=short",
            "https://www.youtube.com/watch",
            "https://youtu.be/",
            "https://www.youtube.com/channel/UCabc",
            "https://www.youtube.com/watch?v=dQw4w9WgXc%21",
        ] {
            assert_eq!(embed(u).unwrap_err().status(), 400, "{u}");
        }
    }

    #[test]
    fn vimeo_forms() {
        assert_eq!(
            ok("https://vimeo.com/76979871"),
            "https://player.vimeo.com/video/76979871"
        );
        assert_eq!(
            ok("https://vimeo.com/76979871/abc123def"),
            "https://player.vimeo.com/video/76979871?h=abc123def"
        );
        assert_eq!(
            ok("https://player.vimeo.com/video/76979871?h=abc123def&badge=0"),
            "https://player.vimeo.com/video/76979871?h=abc123def"
        );
        assert_eq!(
            ok("https://vimeo.com/channels/staffpicks/76979871"),
            "https://player.vimeo.com/video/76979871"
        );
        assert_eq!(
            ok("https://vimeo.com/groups/shortfilms/videos/76979871"),
            "https://player.vimeo.com/video/76979871"
        );
        assert!(embed("https://vimeo.com/about").is_err());
    }

    #[test]
    fn loom_and_wistia() {
        assert_eq!(
            ok("https://www.loom.com/share/0281766fa2d04bb788eaf19e65135184"),
            "https://www.loom.com/embed/0281766fa2d04bb788eaf19e65135184"
        );
        assert_eq!(
            ok("https://loom.com/embed/abc"),
            "https://www.loom.com/embed/abc"
        );
        let w = "https://fast.wistia.net/embed/iframe/29b0fbf547";
        assert_eq!(ok("https://acme.wistia.com/medias/29b0fbf547"), w);
        assert_eq!(ok("https://acme.wi.st/medias/29b0fbf547"), w);
        assert_eq!(ok("https://fast.wistia.net/embed/iframe/29b0fbf547"), w);
        assert_eq!(ok("https://fast.wistia.com/embed/medias/29b0fbf547"), w);
    }

    #[test]
    fn dailymotion_needs_a_player_id() {
        let e = embed("https://www.dailymotion.com/video/x8abc12").unwrap_err();
        assert!(e.message().contains("player id"), "{e}");
        let config = Config {
            dailymotion_player_id: Some("xplay".into()),
            ..Config::default()
        };
        let want = "https://geo.dailymotion.com/player/xplay.html?video=x8abc12";
        for u in [
            "https://www.dailymotion.com/video/x8abc12",
            "https://dai.ly/x8abc12",
        ] {
            assert_eq!(video_embed(&Url::parse(u).unwrap(), &config).unwrap(), want);
        }
    }

    #[test]
    fn direct_files_embed_as_themselves() {
        for u in [
            "https://cdn.example.com/v/intro.mp4",
            "https://cdn.example.com/v/INTRO.WEBM",
            "https://cdn.example.com/clip.mov?token=1",
            "https://cdn.example.com/live/index.m3u8",
        ] {
            assert_eq!(ok(u), Url::parse(u).unwrap().as_str());
        }
    }

    #[test]
    fn other_hosts_are_refused() {
        for u in [
            "https://example.com/watch?v=dQw4w9WgXcQ",
            "https://example.com/video.avi",
            "https://notyoutube.com/watch?v=dQw4w9WgXcQ",
        ] {
            let e = embed(u).unwrap_err();
            match e {
                ApiError::Validation { field, .. } => assert_eq!(field, "external_url"),
                other => panic!("{other:?}"),
            }
        }
    }
}
