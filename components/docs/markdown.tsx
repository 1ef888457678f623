/**
 * A docs page's Markdown as the app shows it (server component): GitHub-flavoured (tables, task
 * lists, strikethrough, autolinks) through react-markdown + remark-gfm. Raw HTML in the Markdown is
 * never executed or inserted (react-markdown escapes it; no rehype-raw), and link URLs go through
 * react-markdown's safe-protocol filter. Relative links between pages point at /docs (links.ts).
 */
import Link from "next/link";
import { Children, isValidElement, type ComponentProps, type ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { cn } from "@/components/ui/cn";
import { anchor, docHref } from "./links";

/** The text of a heading's children (for its anchor). */
function textOf(node: ReactNode): string {
  if (typeof node === "string" || typeof node === "number") return String(node);
  if (Array.isArray(node)) return node.map(textOf).join("");
  if (isValidElement<{ children?: ReactNode }>(node)) return textOf(node.props.children);
  return "";
}

function heading(Tag: "h1" | "h2" | "h3" | "h4", className: string) {
  return function Heading({ children }: { children?: ReactNode }) {
    const id = anchor(textOf(Children.toArray(children)));
    return (
      <Tag id={id} className={cn("group scroll-mt-6 font-semibold tracking-tight", className)}>
        {children}
        {Tag !== "h1" ? (
          <a href={`#${id}`} aria-hidden className="ml-2 text-muted-foreground opacity-0 group-hover:opacity-100">
            #
          </a>
        ) : null}
      </Tag>
    );
  };
}

function DocLink({ href = "", children }: ComponentProps<"a">) {
  const target = docHref(href);
  if (target === null) return <span className="font-medium">{children}</span>;
  const className = "font-medium text-primary underline underline-offset-4 hover:text-primary/80";
  if (/^(https?:)?\/\//i.test(target)) {
    return (
      <a href={target} className={className} rel="noreferrer noopener" target="_blank">
        {children}
      </a>
    );
  }
  return (
    <Link href={target} className={className}>
      {children}
    </Link>
  );
}

const components: Components = {
  h1: heading("h1", "mb-4 text-3xl"),
  h2: heading("h2", "mt-10 mb-3 border-b pb-2 text-2xl"),
  h3: heading("h3", "mt-8 mb-2 text-xl"),
  h4: heading("h4", "mt-6 mb-2 text-base"),
  p: ({ children }) => <p className="my-4 leading-7">{children}</p>,
  a: DocLink,
  ul: ({ children, className }) => <ul className={cn("my-4 ml-6 list-disc space-y-1 [&_ul]:my-1", className?.includes("contains-task-list") && "ml-0 list-none")}>{children}</ul>,
  ol: ({ children }) => <ol className="my-4 ml-6 list-decimal space-y-1">{children}</ol>,
  li: ({ children }) => <li className="leading-7">{children}</li>,
  blockquote: ({ children }) => <blockquote className="my-4 border-l-2 pl-4 text-muted-foreground italic">{children}</blockquote>,
  hr: () => <hr className="my-8" />,
  pre: ({ children }) => (
    <pre className="my-4 overflow-x-auto rounded-lg border bg-muted/50 p-4 font-mono text-[13px] leading-relaxed [&>code]:bg-transparent [&>code]:p-0 [&>code]:text-[13px]">
      {children}
    </pre>
  ),
  code: ({ children, className }) => <code className={cn("rounded bg-muted px-1.5 py-0.5 font-mono text-[0.85em]", className)}>{children}</code>,
  table: ({ children }) => (
    <div className="my-6 w-full overflow-x-auto rounded-lg border">
      <table className="w-full text-sm">{children}</table>
    </div>
  ),
  thead: ({ children }) => <thead className="bg-muted/50">{children}</thead>,
  tr: ({ children }) => <tr className="border-b last:border-0">{children}</tr>,
  th: ({ children, style }) => <th style={style} className="px-3 py-2 text-left align-top font-medium">{children}</th>,
  td: ({ children, style }) => <td style={style} className="px-3 py-2 align-top leading-6 [&_code]:break-words">{children}</td>,
  img: ({ src, alt }) => {
    const target = typeof src === "string" ? docHref(src) : null;
    // eslint-disable-next-line @next/next/no-img-element -- docs images are plain files of any size, served as they are
    return target ? <img src={target} alt={alt ?? ""} className="my-4 max-w-full rounded-lg border" /> : null;
  },
};

interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
}

/** A remark plugin: HTML comments (the generated pages' "do not edit" note) are for the file's editors, not its readers. */
function dropHtmlComments() {
  const prune = (node: MdNode) => {
    if (!node.children) return;
    node.children = node.children.filter((c) => !(c.type === "html" && c.value?.trimStart().startsWith("<!--")));
    node.children.forEach(prune);
  };
  return prune;
}

export function Markdown({ markdown }: { markdown: string }) {
  return (
    <div className="text-[15px]" data-testid="docs-content">
      <ReactMarkdown remarkPlugins={[remarkGfm, dropHtmlComments]} components={components}>
        {markdown}
      </ReactMarkdown>
    </div>
  );
}
