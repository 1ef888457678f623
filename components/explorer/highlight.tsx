import { Fragment } from "react";

/** Marks the words of `query` (3+ letters) in `text`. */
export function Highlight({ text, query }: { text: string; query?: string }) {
  const words = [...new Set((query ?? "").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 2))];
  if (!words.length) return <>{text}</>;
  const re = new RegExp(`(${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`, "giu");
  const parts = text.split(re);
  return (
    <>
      {parts.map((p, i) =>
        i % 2 === 1 ? (
          <mark key={i} className="rounded-sm bg-yellow-200/70 px-0.5 text-inherit dark:bg-yellow-500/30">
            {p}
          </mark>
        ) : (
          <Fragment key={i}>{p}</Fragment>
        ),
      )}
    </>
  );
}
