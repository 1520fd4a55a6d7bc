// The upload page: a file sent with the official tus client (`vendor/tus.min.js`, the global
// `tus`) to the API's resumable uploads on this origin, with its progress; the asset the last
// byte makes is shown at the end. A connection that drops is retried (and the upload goes on
// from the offset the server kept); the upload's URL is kept in the browser's storage, so a
// reload resumes it too.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const form = $("form");
  const status = $("status");
  const progress = $("progress");
  const result = $("result");
  // A key in the address (`?key=...`) fills the field; the page keeps it nowhere else.
  const params = new URLSearchParams(location.search);
  if (params.has("key")) {
    $("key").value = params.get("key");
  }

  function show(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  function size(bytes) {
    const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let n = bytes;
    let unit = 0;
    while (n >= 1024 && unit < units.length - 1) {
      n /= 1024;
      unit += 1;
    }
    return (unit === 0 ? String(n) : n.toFixed(1)) + " " + units[unit];
  }

  async function showAsset(location, key) {
    const answer = await fetch(location, { headers: { Authorization: "Bearer " + key } });
    if (!answer.ok) {
      throw new Error("the asset could not be read (" + answer.status + ")");
    }
    const asset = (await answer.json()).data;
    result.replaceChildren();
    const line = document.createElement("p");
    line.textContent = asset.title + " — " + asset.asset_type + ", " + size(asset.file_size);
    line.dataset.assetId = asset.id;
    line.id = "asset";
    result.append(line);
    result.hidden = false;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const key = $("key").value.trim();
    const file = $("file").files[0];
    if (!key || !file) {
      show("error", "Give a key and choose a file.");
      return;
    }
    const metadata = { filename: file.name, is_public: $("public").checked ? "true" : "false" };
    const title = $("title").value.trim();
    if (title) {
      metadata.title = title;
    }
    $("start").disabled = true;
    result.hidden = true;
    show("uploading", "Starting…");
    const upload = new tus.Upload(file, {
      endpoint: new URL("/api/v1/uploads", location.href).href,
      headers: { Authorization: "Bearer " + key },
      metadata: metadata,
      // Waits before each retry after a failure (a dropped connection, a 423 while another
      // request still writes); then the upload goes on from the server's offset.
      retryDelays: [0, 1000, 3000, 5000, 10000],
      removeFingerprintOnSuccess: true,
      onProgress(sent, total) {
        progress.value = total ? sent / total : 0;
        show("uploading", size(sent) + " of " + size(total));
      },
      onShouldRetry(error, attempt) {
        status.dataset.retries = String(Number(status.dataset.retries || 0) + 1);
        show("retrying", "Connection lost; trying again (" + (attempt + 1) + ")…");
        const code = error.originalResponse ? error.originalResponse.getStatus() : 0;
        return code === 0 || code === 409 || code === 423 || code >= 500;
      },
      onError(error) {
        $("start").disabled = false;
        const response = error.originalResponse;
        let text = String(error.message || error);
        if (response) {
          try {
            text = JSON.parse(response.getBody()).message || text;
          } catch (_) {
            // Not JSON: keep the client's message.
          }
        }
        show("error", "Upload failed: " + text);
      },
      async onSuccess(payload) {
        progress.value = 1;
        const response = payload && payload.lastResponse;
        const where = response && response.getHeader("Asset-Location");
        try {
          if (where) {
            await showAsset(where, key);
          }
          show("done", "Uploaded.");
        } catch (error) {
          show("error", "Uploaded, but " + error.message);
        }
        $("start").disabled = false;
      },
    });
    // An upload of this file that an earlier visit began goes on where it stopped.
    const earlier = await upload.findPreviousUploads();
    if (earlier.length > 0) {
      upload.resumeFromPreviousUpload(earlier[0]);
    }
    upload.start();
  });
})();
