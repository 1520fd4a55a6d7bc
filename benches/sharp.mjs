// The sharp side of `cargo bench --bench images`: the sharp benchmark task (a JPEG to
// 720 x 588, Lanczos3, JPEG quality 80) on one thread, `ITERATIONS` times one after another.
// Prints the operations per second as JSON and writes the last output to OUT.
//
//   node benches/sharp.mjs IN OUT ITERATIONS
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(process.env.SHARP_MODULES + '/');
const sharp = require('sharp');
sharp.concurrency(1);
sharp.cache(false);

const [input, output, iterations] = process.argv.slice(2);
const source = readFileSync(input);
const once = () =>
  sharp(source).resize(720, 588, { kernel: 'lanczos3' }).jpeg({ quality: 80 }).toBuffer();
await once(); // warm up
const started = process.hrtime.bigint();
let last;
for (let i = 0; i < Number(iterations); i += 1) last = await once();
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
writeFileSync(output, last);
console.log(JSON.stringify({ opsPerSecond: Number(iterations) / seconds, vips: sharp.versions.vips }));
