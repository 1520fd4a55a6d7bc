// Uploads a file with tus-js-client, the official tus client for JavaScript, in Node.js,
// retrying through dropped connections; prints the upload's URL and its Asset-Location.
// Usage: node tus_js_upload.cjs MODULES_DIR ENDPOINT KEY PATH TITLE
"use strict";
const path = require("path");
const fs = require("fs");

const [modules, endpoint, key, file, title] = process.argv.slice(2);
const tus = require(path.join(modules, "node_modules", "tus-js-client"));

const upload = new tus.Upload(fs.createReadStream(file), {
  endpoint,
  headers: { Authorization: "Bearer " + key },
  chunkSize: 64 * 1024 * 1024,
  uploadSize: fs.statSync(file).size,
  metadata: { filename: path.basename(file), title },
  retryDelays: Array(30).fill(500),
  onError(error) {
    console.error("tus-js-client failed: " + error);
    process.exit(1);
  },
  onSuccess(payload) {
    console.log(upload.url);
    console.log(payload.lastResponse.getHeader("Asset-Location") || "");
    process.exit(0);
  },
});
upload.start();
