/**
 * The layer rule, checked: every import between top-level folders of `server/` (and from the
 * entry points `app/`, `components/`, `inngest/`, `lib/`) must point to a strictly lower layer,
 * and no file may reach itself through imports (static or dynamic `import()`).
 *
 * `npx tsx scripts/import-graph.ts` prints files per layer, upward imports, circular imports and
 * boundary casts; `scripts/import-graph.test.ts` asserts the counts are 0.
 *
 * Tests (`*.test.ts`), Playwright specs and test helpers (`testing/`, `*-fixtures.ts`,
 * `*.fixture.ts`, `test-db.ts`) are integration code that may drive the whole stack from
 * anywhere, so they are not checked for direction; they still must not be imported by product code.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/** Highest first. A file may import only from its own folder or from a layer with a lower rank. */
export const LAYERS: Array<{ name: string; rank: number; paths: string[] }> = [
  { name: "app (Next routes)", rank: 12, paths: ["app/"] },
  { name: "components (UI)", rank: 11, paths: ["components/"] },
  { name: "lib (browser tRPC client)", rank: 10, paths: ["lib/"] },
  { name: "CLI", rank: 10, paths: ["server/cli/"] },
  { name: "compat (the Mem0 and Zep APIs over the tRPC procedures)", rank: 10, paths: ["server/compat/"] },
  { name: "entry (tRPC routers, REST helpers, Inngest functions)", rank: 9, paths: ["server/api/", "inngest/"] },
  { name: "next-auth wiring", rank: 8, paths: ["server/auth/options.ts", "server/auth/session.ts"] },
  { name: "eval (benchmarks, on top of services)", rank: 8, paths: ["server/eval/"] },
  { name: "services", rank: 7, paths: ["server/services/"] },
  { name: "search", rank: 6, paths: ["server/search/"] },
  { name: "importers", rank: 5, paths: ["server/importers/"] },
  { name: "llm (model providers, embedders)", rank: 5, paths: ["server/llm/"] },
  { name: "engine", rank: 4, paths: ["server/engine/"] },
  { name: "store (database, repositories)", rank: 3, paths: ["server/store/"] },
  { name: "event bus client (Inngest client, event schemas)", rank: 3, paths: ["inngest/client.ts", "inngest/events.ts"] },
  { name: "pipeline (the spec)", rank: 2, paths: ["server/pipeline/"] },
  { name: "text (tokens, sentences, text rank)", rank: 2, paths: ["server/text/"] },
  { name: "http (outbound URL checks, body limits)", rank: 2, paths: ["server/http/"] },
  { name: "auth primitives (hashing, encryption, permissions)", rank: 2, paths: ["server/auth/"] },
  { name: "core (Db, errors, shared types)", rank: 1, paths: ["server/core/"] },
  { name: "generated Prisma client", rank: 0, paths: ["server/generated/"] },
];

const ROOTS = ["app", "components", "inngest", "lib", "server"];
const SKIP_DIRS = new Set(["node_modules", ".next", "generated"]);

export function isTestCode(file: string): boolean {
  return (
    /\.test\.tsx?$/.test(file) ||
    /(^|\/)testing\//.test(file) ||
    /[-.]fixtures?\.ts$/.test(file) ||
    /(^|\/)test-db\.ts$/.test(file)
  );
}

/** The layer of a repository-relative path: the longest matching prefix wins (file overrides). */
export function layerOf(file: string) {
  let best: { layer: (typeof LAYERS)[number]; length: number } | null = null;
  for (const layer of LAYERS) {
    for (const p of layer.paths) {
      const hit = p.endsWith("/") ? file.startsWith(p) : file === p;
      if (hit && (!best || p.length > best.length)) best = { layer, length: p.length };
    }
  }
  return best?.layer ?? null;
}

/** The folder a file belongs to for the "same folder" rule (server/<x>/ or the root folder). */
function folderOf(file: string): string {
  const parts = file.split("/");
  return parts[0] === "server" ? `server/${parts[1]}` : parts[0]!;
}

function walk(root: string, dir: string, out: string[]) {
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) walk(root, rel, out);
    } else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(rel);
  }
}

function resolveImport(root: string, from: string, spec: string, files: Set<string>): string | null {
  let base: string;
  if (spec.startsWith("@/")) base = spec.slice(2);
  else if (spec.startsWith(".")) base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  else return null;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) {
    if (files.has(candidate)) return candidate;
  }
  // The generated Prisma client is not walked; any import into it is still an edge to its layer.
  if (base.startsWith("server/generated/")) return base;
  void root;
  return null;
}

export interface Edge {
  from: string;
  to: string;
  /** `import type`: checked for direction, but no run-time cycle. */
  typeOnly?: boolean;
}

export interface ImportReport {
  files: string[];
  edges: Edge[];
  filesPerLayer: Array<{ layer: string; files: number }>;
  unlayered: string[];
  upward: Edge[];
  /** Product code importing test code. */
  intoTests: Edge[];
  /** Run-time import cycles between files, each as one strongly connected component. */
  cycles: string[][];
  /** Cycles between folders (any import, types included), e.g. engine <-> llm. */
  folderCycles: string[][];
}

/** Import/export specifiers of a file; `typeOnly` when nothing of it exists at run time. */
function importsOf(source: ts.SourceFile): Array<{ spec: string; typeOnly: boolean }> {
  const out: Array<{ spec: string; typeOnly: boolean }> = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      let typeOnly = false;
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause;
        typeOnly =
          !!clause &&
          (clause.isTypeOnly ||
            (!clause.name && !!clause.namedBindings && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      } else typeOnly = node.isTypeOnly;
      out.push({ spec: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      out.push({ spec: node.arguments[0].text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

export function analyzeImports(root: string): ImportReport {
  const files: string[] = [];
  for (const r of ROOTS) if (existsSync(path.join(root, r))) walk(root, r, files);
  const fileSet = new Set(files);
  const edges: Edge[] = [];
  for (const from of files) {
    const source = ts.createSourceFile(from, readFileSync(path.join(root, from), "utf8"), ts.ScriptTarget.Latest, false);
    for (const imp of importsOf(source)) {
      const to = resolveImport(root, from, imp.spec, fileSet);
      if (to && to !== from) edges.push({ from, to, typeOnly: imp.typeOnly });
    }
  }

  const product = files.filter((f) => !isTestCode(f));
  const productEdges = edges.filter((e) => !isTestCode(e.from));
  const upward = productEdges.filter((e) => {
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (!a || !b) return true;
    if (a === b && folderOf(e.from) === folderOf(e.to)) return false;
    return b.rank >= a.rank;
  });
  const runtime = productEdges.filter((e) => !e.typeOnly);
  const unit = (f: string) => `${folderOf(f)}${layerOf(f)?.paths.some((p) => !p.endsWith("/")) ? `/${path.posix.basename(f)}` : ""}`;
  const intoTests = productEdges.filter((e) => isTestCode(e.to));

  const filesPerLayer = LAYERS.filter((l) => l.rank > 0).map((l) => ({
    layer: l.name,
    files: product.filter((f) => layerOf(f) === l).length,
  }));
  const unlayered = product.filter((f) => !layerOf(f));

  return {
    files: product,
    edges: productEdges,
    filesPerLayer,
    unlayered,
    upward,
    intoTests,
    cycles: stronglyConnected(product, runtime),
    folderCycles: stronglyConnected(
      [...new Set(product.map(unit))],
      productEdges.map((e) => ({ from: unit(e.from), to: unit(e.to) })).filter((e) => e.from !== e.to),
    ),
  };
}

/** Tarjan's algorithm: components with more than one node (or a self-loop) are cycles. */
function stronglyConnected(nodes: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const n of nodes) if (!idx.has(n)) visit(n);
  return out;
}

/** `as unknown as` and `as never` outside the generated client: in product code, and in tests (deliberately bad input). */
export function countCasts(root: string) {
  const files: string[] = [];
  for (const r of [...ROOTS, "bench", "scripts"]) if (existsSync(path.join(root, r))) walk(root, r, files);
  const count = { product: { asUnknownAs: 0, asNever: 0 }, tests: { asUnknownAs: 0, asNever: 0 } };
  for (const f of files) {
    if (f === "scripts/import-graph.ts") continue; // its own patterns
    const text = readFileSync(path.join(root, f), "utf8");
    const bucket = isTestCode(f) ? count.tests : count.product;
    bucket.asUnknownAs += text.match(/\bas unknown as\b/g)?.length ?? 0;
    bucket.asNever += text.match(/\bas never\b/g)?.length ?? 0;
  }
  return count;
}

/** Product files outside `server/store` that run SQL of their own (`$queryRaw…`/`$executeRaw…`): repositories own the SQL. */
export function rawSqlOutsideStore(root: string): string[] {
  const files: string[] = [];
  for (const r of ROOTS) if (existsSync(path.join(root, r))) walk(root, r, files);
  return files.filter(
    (f) =>
      !isTestCode(f) &&
      !f.startsWith("server/store/") &&
      !f.startsWith("server/generated/") &&
      /\$(queryRaw|executeRaw)/.test(readFileSync(path.join(root, f), "utf8")),
  );
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  const root = process.cwd();
  const report = analyzeImports(root);
  console.log("files per layer (product code, tests excluded):");
  for (const l of report.filesPerLayer) console.log(`  ${String(l.files).padStart(4)}  ${l.layer}`);
  if (report.unlayered.length) console.log(`  unlayered: ${report.unlayered.join(", ")}`);
  console.log(`upward imports: ${report.upward.length}`);
  for (const e of report.upward) console.log(`  ${e.from} -> ${e.to}`);
  console.log(`product code importing test code: ${report.intoTests.length}`);
  for (const e of report.intoTests) console.log(`  ${e.from} -> ${e.to}`);
  console.log(`circular imports (file cycles): ${report.cycles.length}`);
  for (const c of report.cycles) console.log(`  ${c.join(" <-> ")}`);
  console.log(`folder cycles: ${report.folderCycles.length}`);
  for (const c of report.folderCycles) console.log(`  ${c.join(" <-> ")}`);
  const rawSql = rawSqlOutsideStore(root);
  console.log(`product files with SQL outside server/store: ${rawSql.length}`);
  for (const f of rawSql) console.log(`  ${f}`);
  const casts = countCasts(root);
  console.log(`casts in product code: as unknown as ${casts.product.asUnknownAs}, as never ${casts.product.asNever}`);
  console.log(`casts in tests: as unknown as ${casts.tests.asUnknownAs}, as never ${casts.tests.asNever}`);
}
