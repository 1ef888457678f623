/**
 * npm run bench:import -- --media [pages] [images] — documents and OCR: generates a PDF of
 * `pages` pages (default 500, ~1,800 characters each) and `images` PNGs of rendered text (default 10),
 * runs the importers over them (no database: the importer's own cost) and prints pages/s, OCR
 * images/s and peak RSS, with the machine's load average beside them (the machine is shared).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { readImport } from "../server/importers";
import { textPdf, textPng } from "../server/importers/testing/media-fixtures";

const nums = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number);
const pages = nums[0] ?? 500;
const images = nums[1] ?? 10;
const dir = mkdtempSync(path.join(tmpdir(), "synthex-bench-media-"));
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
const loadavg = () => readFileSync("/proc/loadavg", "utf8").trim();

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 25);

const WORDS = "orchard ledger basil tram harbour invoice lantern meadow quarterly kiwi trellis budget minutes sprint venue parcel".split(" ");
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const line = () => Array.from({ length: 12 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(" ");

async function drain(file: string, format: "pdf" | "image" | "folder") {
  let items = 0;
  let chars = 0;
  for await (const ev of readImport(file, format)) {
    if ("item" in ev) {
      items++;
      chars += ev.item.content.length;
    }
  }
  return { items, chars };
}

async function main() {
  const pdfFile = path.join(dir, "big.pdf");
  writeFileSync(pdfFile, await textPdf(Array.from({ length: pages }, (_, i) => `Page ${i + 1}\n${Array.from({ length: 20 }, line).join("\n")}`), { title: "Bench", author: "bench" }));
  const imgDir = path.join(dir, "images");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(imgDir);
  for (let i = 0; i < images; i++) writeFileSync(path.join(imgDir, `shot-${i}.png`), await textPng([`Screenshot ${i}: ${line().slice(0, 40)}`, line().slice(0, 45), line().slice(0, 45)]));
  const baseRss = process.memoryUsage().rss;
  peakRss = baseRss;

  console.log(`load before: ${loadavg()}`);
  let t = performance.now();
  const pdf = await drain(pdfFile, "pdf");
  const pdfSec = (performance.now() - t) / 1000;
  const pdfPeak = peakRss;
  console.log(`PDF: ${pdf.items} pages (${(readFileSync(pdfFile).length / 1024).toFixed(0)} KB, ${pdf.chars} chars) in ${pdfSec.toFixed(1)} s → ${(pdf.items / pdfSec).toFixed(0)} pages/s; peak RSS ${mb(pdfPeak)} (${mb(baseRss)} before)   load: ${loadavg()}`);

  t = performance.now();
  const ocr = await drain(imgDir, "folder");
  const ocrSec = (performance.now() - t) / 1000;
  console.log(`OCR: ${ocr.items} images (1100 px wide, 3 lines) in ${ocrSec.toFixed(1)} s → ${(ocr.items / ocrSec).toFixed(2)} images/s, incl. ~1.5 s worker start; peak RSS ${mb(peakRss)}   load: ${loadavg()}`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    clearInterval(sampler);
    rmSync(dir, { recursive: true, force: true });
  });
