import { describe, expect, it } from "vitest";
import { anchor, docHref, docsForPath } from "./links";

describe("docs links in the app", () => {
  it("rewrites relative .md links to /docs pages and keeps anchors", () => {
    expect(docHref("configuration.md")).toBe("/docs/configuration");
    expect(docHref("./cli.md#synthex-init")).toBe("/docs/cli#synthex-init");
    expect(docHref("index.md")).toBe("/docs");
    expect(docHref("images/pipeline.png")).toBe("/docs/files/images/pipeline.png");
  });

  it("leaves absolute links and anchors alone, and drops paths outside docs/", () => {
    expect(docHref("https://example.com/a.md")).toBe("https://example.com/a.md");
    expect(docHref("/w/x/pipelines")).toBe("/w/x/pipelines");
    expect(docHref("#records")).toBe("#records");
    expect(docHref("../README.md")).toBeNull();
    expect(docHref("images/../../.env")).toBeNull();
  });

  it("makes GitHub's heading anchors", () => {
    expect(anchor("synthex branch create")).toBe("synthex-branch-create");
    expect(anchor("Mem0 / Zep drop-in (/compat)")).toBe("mem0--zep-drop-in-compat");
    expect(anchor("Production: required when DATABASE_URL is set")).toBe("production-required-when-database_url-is-set");
  });

  it("names the page about the current part of the app", () => {
    expect(docsForPath("/w/acme/pipelines/p1/evals/compare")?.slug).toBe("evals");
    expect(docsForPath("/w/acme/compare")?.slug).toBe("evals");
    expect(docsForPath("/w/acme/pipelines/p1/traffic")?.slug).toBe("traffic");
    expect(docsForPath("/w/acme/settings/api-keys")?.slug).toBe("security");
    expect(docsForPath("/w/acme/pipelines/new")?.slug).toBe("templates");
    expect(docsForPath("/w/acme/pipelines/p1/canvas")?.slug).toBe("concepts");
    expect(docsForPath("/w/acme/pipelines")).toBeNull();
  });
});
