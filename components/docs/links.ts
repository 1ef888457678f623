/**
 * Links of the docs pages as the app shows them: docs/*.md link to each other by relative file name
 * (`concepts.md#records`, as the repository shows them); in the app that is /docs/concepts#records.
 */

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens (so `#records` links work in both). */
export const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");

const ABSOLUTE = /^([a-z][a-z0-9+.-]*:|\/\/|\/|#)/i;

/**
 * Where a link of a docs page goes in the app: `x.md` → /docs/x (index.md → /docs), anchors kept;
 * absolute URLs and in-page anchors unchanged; an image or file beside the pages → /docs/files/…;
 * null for a relative path outside docs/ (the repository's files are not served).
 */
export function docHref(href: string): string | null {
  if (ABSOLUTE.test(href)) return href;
  const [file = "", hash] = href.replace(/^\.\//, "").split("#", 2);
  if (file.split("/").includes("..")) return null;
  const page = /^([A-Za-z0-9_-]+)\.md$/.exec(file);
  const suffix = hash === undefined ? "" : `#${hash}`;
  if (page) return `${page[1] === "index" ? "/docs" : `/docs/${page[1]}`}${suffix}`;
  return `/docs/files/${file}${suffix}`;
}

/** The docs page about the part of the app at `pathname` (/w/<slug>/…), for the help menu; null when none is obvious. */
export function docsForPath(pathname: string): { slug: string; label: string } | null {
  const rest = pathname.replace(/^\/w\/[^/]+/, "");
  if (/\/(evals|compare)(\/|$)/.test(rest)) return { slug: "evals", label: "Evals and the decision screen" };
  if (/\/traffic(\/|$)/.test(rest)) return { slug: "traffic", label: "Query log, replay and shadow" };
  if (/^\/settings\/(api-keys|members|audit)(\/|$)/.test(rest)) return { slug: "security", label: "Security and tenancy" };
  if (/^\/api(\/|$)/.test(rest)) return { slug: "api", label: "REST API and MCP" };
  if (/^\/pipelines\/new(\/|$)/.test(rest)) return { slug: "templates", label: "Templates and how to choose" };
  if (/^\/pipelines\/[^/]+/.test(rest)) return { slug: "concepts", label: "Concepts" };
  return null;
}
