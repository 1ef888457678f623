/**
 * The documentation pages the app shows at /docs: the Markdown files of docs/ (the same files the
 * repository shows), read at request time from the working directory (`npm start`, `npm run dev`)
 * or the standalone server's (the Docker image: next.config.ts traces docs/ into it).
 *
 * The sidebar's order is the order of the links in docs/index.md (the map of the docs); pages it
 * does not link come after, alphabetically. Without an index.md, every page alphabetically.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export interface DocLink {
  slug: string;
  title: string;
}

export interface DocPage extends DocLink {
  markdown: string;
}

/** A page's name in URLs: docs/<slug>.md. */
const SLUG = /^[a-z0-9][a-z0-9_-]*$/i;

/** Files docs pages may show (images), by extension, and the type they are served as. */
export const DOC_ASSET_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
};

export const docsDir = () => path.join(/*turbopackIgnore: true*/ process.cwd(), "docs");

const titleOf = (markdown: string, slug: string) => /^#\s+(.+?)\s*#*\s*$/m.exec(markdown)?.[1]?.replace(/[`*_]/g, "") ?? slug;

async function markdownFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith(".md") && SLUG.test(f.slice(0, -3))).sort();
  } catch {
    return [];
  }
}

/** Slugs docs/index.md links to, in order (relative `x.md` links only, each once). */
export function indexOrder(indexMarkdown: string): string[] {
  const slugs: string[] = [];
  for (const m of indexMarkdown.matchAll(/\]\(\s*(?:\.\/)?([A-Za-z0-9_-]+)\.md(?:#[^)\s]*)?\s*\)/g)) {
    if (!slugs.includes(m[1]!)) slugs.push(m[1]!);
  }
  return slugs;
}

/** Every page for the sidebar: index first, then index.md's links in order, then the rest alphabetically. */
export async function listDocs(dir = docsDir()): Promise<DocLink[]> {
  const files = await markdownFiles(dir);
  const slugs = files.map((f) => f.slice(0, -3));
  const pages = new Map<string, DocLink>();
  for (const slug of slugs) pages.set(slug, { slug, title: titleOf(await readFile(path.join(dir, `${slug}.md`), "utf8"), slug) });
  const ordered = pages.has("index") ? ["index", ...indexOrder(await readFile(path.join(dir, "index.md"), "utf8"))] : [];
  const rest = slugs.filter((s) => !ordered.includes(s));
  return [...ordered, ...rest].flatMap((s) => pages.get(s) ?? []);
}

/** One page by slug, or null when there is none (an unknown or malformed slug). */
export async function readDoc(slug: string, dir = docsDir()): Promise<DocPage | null> {
  if (!SLUG.test(slug)) return null;
  try {
    const markdown = await readFile(path.join(dir, `${slug}.md`), "utf8");
    return { slug, title: titleOf(markdown, slug), markdown };
  } catch {
    return null;
  }
}

/** An image under docs/ (a relative path from the page), or null: other types and paths outside docs/ are never served. */
export async function readDocAsset(relative: string, dir = docsDir()): Promise<{ body: Buffer; contentType: string } | null> {
  const contentType = DOC_ASSET_TYPES[path.extname(relative).toLowerCase()];
  const full = path.resolve(dir, relative);
  if (!contentType || !full.startsWith(`${path.resolve(dir)}${path.sep}`)) return null;
  try {
    return { body: await readFile(full), contentType };
  } catch {
    return null;
  }
}
