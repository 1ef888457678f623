import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docsDir, indexOrder, listDocs, readDoc, readDocAsset } from "./docs";

function docsFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "synthex-docs-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

describe("docs pages", () => {
  it("orders the sidebar as docs/index.md links, then the pages it does not link alphabetically", async () => {
    const dir = docsFolder({
      "index.md": "# Synthex docs\n\n1. [Quick start](quick-start.md)\n2. [Concepts](./concepts.md#records)\n3. [Gone](missing.md) and [again](quick-start.md)\n",
      "quick-start.md": "# Quick start\n",
      "concepts.md": "# Concepts: `records`\n",
      "zeta.md": "no heading\n",
      "alpha.md": "# Alpha\n",
      "notes.txt": "not a page",
    });
    expect(await listDocs(dir)).toEqual([
      { slug: "index", title: "Synthex docs" },
      { slug: "quick-start", title: "Quick start" },
      { slug: "concepts", title: "Concepts: records" },
      { slug: "alpha", title: "Alpha" },
      { slug: "zeta", title: "zeta" },
    ]);
    expect(indexOrder("[a](a.md) [b](https://x.org/b.md) [c](c.md#x)")).toEqual(["a", "c"]);
  });

  it("without an index.md, lists every page alphabetically", async () => {
    const dir = docsFolder({ "cli.md": "# CLI reference\n", "configuration.md": "# Configuration\n" });
    expect((await listDocs(dir)).map((p) => p.slug)).toEqual(["cli", "configuration"]);
  });

  it("reads a page by slug, never a path", async () => {
    const dir = docsFolder({ "cli.md": "# CLI reference\n\ntext\n", "sub/secret.md": "# no\n" });
    expect(await readDoc("cli", dir)).toMatchObject({ slug: "cli", title: "CLI reference" });
    expect(await readDoc("missing", dir)).toBeNull();
    expect(await readDoc("../cli", dir)).toBeNull();
    expect(await readDoc("sub/secret", dir)).toBeNull();
  });

  it("serves images under docs/ only", async () => {
    const dir = docsFolder({ "images/a.png": "PNG", "page.md": "# P\n" });
    writeFileSync(path.join(path.dirname(dir), "outside.png"), "x");
    expect(await readDocAsset("images/a.png", dir)).toEqual({ body: Buffer.from("PNG"), contentType: "image/png" });
    expect(await readDocAsset("page.md", dir)).toBeNull();
    expect(await readDocAsset("../outside.png", dir)).toBeNull();
    expect(await readDocAsset("images/missing.png", dir)).toBeNull();
  });

  it("the repository's docs folder has the generated pages", async () => {
    expect(docsDir()).toBe(path.join(process.cwd(), "docs"));
    const slugs = (await listDocs()).map((p) => p.slug);
    expect(slugs).toEqual(expect.arrayContaining(["cli", "configuration"]));
  });
});
