/** The docs Markdown as the app renders it: GitHub tables and code, links to /docs, and no raw HTML. */
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown } from "./markdown";

const render = (markdown: string) => renderToStaticMarkup(createElement(Markdown, { markdown }));

describe("docs Markdown", () => {
  it("renders GitHub tables, code blocks, heading anchors and relative links as /docs pages", () => {
    const html = render(
      ["# Title", "", "## Step kinds", "", "| a | b |", "| --- | --- |", "| `x=1` | two |", "", "```text", "Usage: synthex <cmd>", "```", "", "See [the CLI](cli.md#synthex-init) and ![pic](images/p.png)."].join("\n"),
    );
    expect(html).toContain('<h2 id="step-kinds"');
    expect(html).toMatch(/<table[^>]*>.*<th[^>]*>a<\/th>.*<code[^>]*>x=1<\/code>/s);
    expect(html).toMatch(/<pre[^>]*><code class="[^"]*language-text[^"]*">Usage: synthex &lt;cmd&gt;\n<\/code><\/pre>/);
    expect(html).toContain('href="/docs/cli#synthex-init"');
    expect(html).toContain('src="/docs/files/images/p.png"');
  });

  it("never inserts raw HTML or script URLs", () => {
    const html = render('Hi <script>alert(1)</script> <img src=x onerror="alert(2)">\n\n<div onclick="x()">d</div>\n\n[click](javascript:alert(3))');
    // As text at most, never as elements or attributes.
    expect(html).not.toMatch(/<script|<img|<div onclick|href="javascript:/i);
    expect(html).toContain("&lt;script&gt;");
    expect(html).toContain("click");
  });
});
